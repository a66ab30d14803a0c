/** The file in a daemon's data dir (`TETHER_DATA_DIR`) the bench's daemon probe writes its readings to. */
export const PROBE_FILE_NAME = 'bench-probe.json';
