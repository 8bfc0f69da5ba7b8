export type { Source, SourceInfo, SourceOptions } from './source.js';
export {
  ALLOW_FILE_URIS_ENV,
  BUILTIN_SCHEMES,
  fileUrisAllowed,
  parseSourceUri,
  redactUri,
  type ParseSourceUriOptions,
} from './uri.js';
export { openSource, registerSourceScheme, sourceSchemes, type SourceFactory } from './registry.js';
export { HttpSource } from './http-source.js';
export { FileSource } from './file-source.js';
export { checkRange } from './range.js';
export { collect } from './exact-stream.js';
export { SourcePolicy, SOURCE_ALLOW_ENV, parseAllowList, type Resolve } from './source-policy.js';
export { forbiddenKind, type AddressKind } from './address-ranges.js';
