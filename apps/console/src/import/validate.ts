import type { ImportRequest, PlacementPolicy } from '@freeloader/protocol';

/** What the import form holds; numbers are '' when left to the manager's defaults. */
export interface ImportFormValues {
  uri: string;
  folder: string;
  name: string;
  width: number | string;
  stripeSize: number | string;
  /** 'auto': the manager picks (predictive once it has rate history, else round-robin). */
  policy: PlacementPolicy | 'auto';
  /** Asymmetric: the agent id of the importing workstation. */
  host: string;
  /** Copies of each morsel, each on another donor; '' for the manager's default (2). */
  replicas: number | string;
}

export const EMPTY_IMPORT: ImportFormValues = {
  uri: '',
  folder: '',
  name: '',
  width: '',
  stripeSize: '',
  policy: 'auto',
  host: '',
  replicas: '',
};

/**
 * Schemes the form lets through (more plug in later; the manager has the last word). file:// is
 * among them for clusters whose admin allowed it, but never advertised: it is off by default.
 */
export const SCHEMES = ['http', 'https', 'file'];
/** The schemes the form names to a user. */
const ADVERTISED = 'http:// or https://';
/** Limits mirrored from the protocol (limits.ts, imports.ts) so mistakes show before a round trip. */
const MAX_URI = 8192;
const MAX_NAME = 255;
const MAX_PATH = 4096;
const MAX_DEPTH = 32;
const MAX_WIDTH = 64;
const MAX_STRIPE = 1024;
const MAX_REPLICAS = 16;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type ImportErrors = Partial<Record<keyof ImportFormValues, string>>;

function uriError(raw: string): string | undefined {
  const uri = raw.trim();
  if (uri === '') return 'Enter the URI of the dataset, e.g. https://data.example.org/run42.h5';
  if (uri.length > MAX_URI) return `A URI may have at most ${MAX_URI} characters`;
  if (/\s/.test(uri)) return 'A URI cannot contain spaces (encode them as %20)';
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1]?.toLowerCase();
  if (!scheme) return 'Start the URI with its scheme, e.g. https://';
  if (!SCHEMES.includes(scheme)) {
    return `FreeLoader imports from ${ADVERTISED} URIs, not ${scheme}:`;
  }
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'This is not a well-formed URI';
  }
  if (scheme !== 'file' && !url.hostname) return 'The URI needs a host name';
  if (url.pathname === '' || url.pathname.endsWith('/'))
    return 'The URI must name a file, not a folder';
  return undefined;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f]/;

function segmentError(name: string): string | undefined {
  if (name === '') return 'Empty folder names (//) are not allowed';
  if (name === '.' || name === '..') return '"." and ".." are not allowed as names';
  if (CONTROL.test(name)) return 'Names cannot contain control characters';
  if (name.length > MAX_NAME) return `A name may have at most ${MAX_NAME} characters`;
  return undefined;
}

/** The folder's names, with surrounding slashes and spaces tolerated; '' is the root. */
export const folderNames = (folder: string): string[] => {
  const trimmed = folder.trim().replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? [] : trimmed.split('/');
};

function intError(v: number | string, max: number, what: string): string | undefined {
  if (v === '' || v === undefined) return undefined;
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isInteger(n) || n < 1 || n > max)
    return `${what} must be a whole number from 1 to ${max}`;
  return undefined;
}

/**
 * Check the import form; returns a message per bad field (empty when all is well).
 *
 * @example validateImport({ ...EMPTY_IMPORT, uri: 'ftp://x/y' }).uri // 'FreeLoader imports from …'
 */
export function validateImport(v: ImportFormValues): ImportErrors {
  const errors: ImportErrors = {};
  const put = (field: keyof ImportFormValues, message: string | undefined) => {
    if (message) errors[field] = message;
  };
  put('uri', uriError(v.uri));
  const folders = folderNames(v.folder);
  put('folder', folders.map(segmentError).find(Boolean));
  const name = v.name.trim();
  if (name.includes('/')) put('name', 'Put folders in the Folder field; the name has no "/"');
  else if (name !== '') put('name', segmentError(name));
  const path = [...folders, name || 'x'].join('/');
  if (!errors.folder && path.length > MAX_PATH)
    put('folder', `The path may have at most ${MAX_PATH} characters`);
  if (!errors.folder && folders.length + 1 > MAX_DEPTH)
    put('folder', `Folders may nest at most ${MAX_DEPTH - 1} deep`);
  put('width', intError(v.width, MAX_WIDTH, 'Stripe width'));
  put('stripeSize', intError(v.stripeSize, MAX_STRIPE, 'Stripe size'));
  put('replicas', intError(v.replicas, MAX_REPLICAS, 'Copies'));
  if (v.policy === 'asymmetric' && !UUID.test(v.host.trim()))
    put('host', 'Choose the workstation that keeps part of the data (its agent id)');
  return errors;
}

/** The file name a URI ends in (the manager's default dataset name). */
export function nameFromUri(uri: string): string {
  try {
    const last = new URL(uri.trim()).pathname.split('/').filter(Boolean).at(-1);
    return last ? decodeURIComponent(last) : '';
  } catch {
    return '';
  }
}

/** The request for valid form values; `name` is folder + name (or the URI's file name). */
export function toImportRequest(v: ImportFormValues, dryRun: boolean): ImportRequest {
  const name = v.name.trim() || nameFromUri(v.uri);
  const folders = folderNames(v.folder);
  return {
    uri: v.uri.trim(),
    ...(name ? { name: [...folders, name].join('/') } : {}),
    ...(v.width !== '' ? { width: Number(v.width) } : {}),
    ...(v.stripeSize !== '' ? { stripeSize: Number(v.stripeSize) } : {}),
    ...(v.replicas !== '' ? { replicas: Number(v.replicas) } : {}),
    ...(v.policy !== 'auto' ? { policy: v.policy } : {}),
    ...(v.policy === 'asymmetric' ? { hostAgentId: v.host.trim() } : {}),
    dryRun,
  };
}
