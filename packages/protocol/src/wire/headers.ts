/**
 * Header names of the morsel wire (donor morsel service and patching nodes). Both ends name a
 * header through these, so a reader and a writer cannot drift apart on a spelling.
 */

/** SHA-256 (hex) of a morsel's bytes: sent with every morsel GET answer, checked on every PUT. */
export const MORSEL_HASH_HEADER = 'x-morsel-sha256';

/** The source version (ETag) a patched morsel was downloaded from (patching nodes' GET). */
export const SOURCE_ETAG_HEADER = 'x-source-etag';

/** Content type of every morsel body and batch stream. */
export const MORSEL_CONTENT_TYPE = 'application/octet-stream';
