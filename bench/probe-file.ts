/** The file in a daemon's data dir (`TETHER_DATA_DIR`) the bench's daemon probe writes its readings to. */
export const PROBE_FILE_NAME = 'bench-probe.json';
/** Beside it: when this file exists at a reading, the probe runs a full garbage collection first (and removes it). */
export const PROBE_GC_FILE_NAME = 'bench-probe.gc';
/** Beside it: when this file exists at a reading, the probe writes a heap snapshot first, to the path the file holds (and removes it). */
export const PROBE_SNAPSHOT_FILE_NAME = 'bench-probe.snapshot';
