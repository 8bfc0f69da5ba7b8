/**
 * Quote an argument for a POSIX shell: left bare when it is only safe characters, else in
 * single quotes (a single quote inside becomes '\'').
 *
 * @example shellQuote('climate/tas.nc') === 'climate/tas.nc'
 * @example shellQuote("my data/it's.nc") === "'my data/it'\\''s.nc'"
 */
export function shellQuote(arg: string): string {
  if (/^[\w@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The mount point the console suggests. */
export const MOUNT_DIR = '~/freeloader';

export interface ReadCommands {
  /** Sign the CLI in to this manager (once per machine). */
  login: string;
  /** Read the dataset in parallel from its donors into a file named after it. */
  get: string;
  /** Mount the whole namespace read-only. */
  mount: string;
  /** Where the dataset then appears. */
  mountedPath: string;
}

/**
 * The exact `freeloader` commands that read a dataset: `get` into a local file, or `mount`
 * the namespace and open it as a file (datasets are files, folders directories).
 *
 * @example readCommands('climate/tas.nc', 'http://lab:7400').get
 *   // → 'freeloader get climate/tas.nc -o tas.nc --manager http://lab:7400'
 */
export function readCommands(path: string, managerUrl: string): ReadCommands {
  const manager = `--manager ${shellQuote(managerUrl)}`;
  const file = path.split('/').at(-1) ?? path;
  return {
    login: `freeloader login ${manager}`,
    get: `freeloader get ${shellQuote(path)} -o ${shellQuote(file)} ${manager}`,
    mount: `mkdir -p ${MOUNT_DIR} && freeloader mount ${MOUNT_DIR} ${manager}`,
    mountedPath: `${MOUNT_DIR}/${shellQuote(path)}`,
  };
}
