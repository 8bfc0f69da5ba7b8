/** Absolute paths of the build-info files the CLI bundle must be newer than (build-infos.js). */
export declare const CLI_BUILD_INFOS: readonly string[];
