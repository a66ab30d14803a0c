/**
 * The gate a daemon's requests wait behind while it starts: the port is held first (a second
 * daemon is refused before anything is touched), and requests are served once the sessions are
 * adopted.
 */

/** A gate the server's requests wait behind until the sessions are adopted (`open`). */
export function openingGate(): { readonly opened: Promise<void>; readonly open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
