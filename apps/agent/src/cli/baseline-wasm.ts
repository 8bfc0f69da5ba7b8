import { setFlagsFromString } from 'node:v8';

/**
 * WebAssembly gets V8's baseline compiler (Liftoff) only. Node's fetch parses HTTP with llhttp
 * compiled to WebAssembly, and V8 then recompiles that module with TurboFan on a background
 * thread: 85–125 ms more CPU in the 1.5 s after a fresh process's first fetch (on the AMD VM of
 * issue 19: 127–189 ms in all, 76–97 ms with this flag). In a `get`, that compile overlaps the
 * read and is charged to it, ~0.4 CPU-s per GiB of a 256 MiB read; the few manager answers a
 * command parses gain nothing from optimised code. Imported first by the CLI, before any fetch.
 */
setFlagsFromString('--liftoff-only');
