import {
  FreeLoaderError,
  type ImportRequest,
  type ImportResponse,
  type PlacementPolicy,
} from '@freeloader/protocol';
import { loadIdentity } from '../../state/identity.js';

const POLICIES: readonly PlacementPolicy[] = ['round-robin', 'predictive', 'asymmetric'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface PolicyOptions {
  policy?: string;
  host?: string;
  localShare?: string;
}

/**
 * The placement fields of an import request from `--policy`, `--host` and `--local-share`.
 * `--host` is an agent id or an agent's state directory (its identity.json names it), and
 * implies asymmetric; `--local-share` is a fraction (0.27) or a local:remote ratio (3:8).
 *
 * @example await policyFields({ policy: 'asymmetric', host: '/var/lib/fl-agent', localShare: '3:8' })
 *   // → { policy: 'asymmetric', hostAgentId: '<id from identity.json>', localShare: 0.2727… }
 */
export async function policyFields(opts: PolicyOptions): Promise<Partial<ImportRequest>> {
  const out: Partial<ImportRequest> = {};
  if (opts.policy !== undefined) {
    if (!POLICIES.includes(opts.policy as PlacementPolicy)) {
      throw new FreeLoaderError(
        'VALIDATION_FAILED',
        `--policy must be one of ${POLICIES.join(', ')}, not "${opts.policy}"`,
      );
    }
    out.policy = opts.policy as PlacementPolicy;
  }
  if (opts.host !== undefined) out.hostAgentId = await hostAgentId(opts.host);
  if (opts.localShare !== undefined) out.localShare = parseShare(opts.localShare);
  if (out.policy === 'asymmetric' && !out.hostAgentId) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      '--policy asymmetric needs --host: the agent id or state directory of this workstation',
    );
  }
  if (
    (out.hostAgentId || out.localShare !== undefined) &&
    (out.policy ?? 'asymmetric') !== 'asymmetric'
  ) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      '--host and --local-share go with --policy asymmetric',
    );
  }
  return out;
}

/** "0.27" or "3:8" (local:remote morsels per cycle) → the local fraction. */
export function parseShare(text: string): number {
  const ratio = /^(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)$/.exec(text.trim());
  const share = ratio
    ? Number(ratio[1]) / (Number(ratio[1]) + Number(ratio[2]))
    : Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(share) || share < 0 || share > 1) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      `--local-share must be a fraction from 0 to 1 or a ratio like 3:8, not "${text}"`,
    );
  }
  return share;
}

async function hostAgentId(host: string): Promise<string> {
  if (UUID.test(host)) return host.toLowerCase();
  const identity = await loadIdentity(host).catch(() => null);
  if (!identity) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      `--host must be an agent id or an enrolled agent's directory; no identity in ${host}`,
    );
  }
  return identity.agentId;
}

/** One line about how the manager placed it, e.g. "placement: predictive (…)". */
export function describePlacement(plan: ImportResponse['plan'] | undefined): string | null {
  if (!plan?.policy) return null;
  const share =
    plan.localShare !== undefined ? `, ${(plan.localShare * 100).toFixed(1)} % on the host` : '';
  return `placement: ${plan.policy} over ${plan.donors} donor(s)${share}${plan.reason ? ` — ${plan.reason}` : ''}`;
}
