import { SourcePolicy } from '@freeloader/sources';

/**
 * The source policy of a user's own reads (`get`'s fallback to the source, a client's suffix
 * reads, `freeloader source probe`): every address. These run with the user's own rights on
 * data that user asked for, so they reach what the user can reach anyway; donors and the
 * manager, which fetch on other people's behalf, are the ones held to the admin's allow list.
 */
export const OWN_READS_POLICY = new SourcePolicy(['0.0.0.0/0', '::/0']);
