/**
 * A delaying TCP proxy on loopback: a phone's network between a test client and the daemon.
 * Each direction holds every piece for `oneWayMs` and delivers in order (TCP does), so a round
 * trip through it takes twice that more than without it. `stall()` makes the link go dead the
 * way a phone's does under a bridge: nothing is forwarded any more, either way, and neither
 * side is closed (no FIN, no RST): only a missing pong can tell.
 */
import net from 'node:net';

export class DelayProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private stalled = false;

  constructor(
    private readonly targetPort: number,
    readonly oneWayMs: number,
  ) {}

  /** Listens on 127.0.0.1; the port to connect to. */
  async listen(): Promise<number> {
    this.server = net.createServer((client) => this.carry(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Stops forwarding for good, both ways, on every connection; nothing is closed. */
  stall(): void {
    this.stalled = true;
    // Not read any more either: what the daemon writes piles up in its own buffers.
    for (const s of this.sockets) s.pause();
  }

  /** Ends every connection and stops listening. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    if (this.server) await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  private carry(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.setNoDelay(true);
      s.on('error', () => undefined);
      s.on('close', () => this.sockets.delete(s));
    }
    this.lane(client, upstream);
    this.lane(upstream, client);
    if (this.stalled) this.stall();
  }

  /** Bytes read from `from` reach `to` `oneWayMs` later, in order; an end follows its bytes. */
  private lane(from: net.Socket, to: net.Socket): void {
    // Timers of one duration fire in the order they were set: the order of the bytes is kept.
    from.on('data', (data: Buffer) => {
      if (this.stalled) return;
      setTimeout(() => {
        if (!this.stalled && !to.destroyed) to.write(data);
      }, this.oneWayMs);
    });
    from.on('end', () => {
      setTimeout(() => {
        if (!this.stalled) to.end();
      }, this.oneWayMs);
    });
    from.on('close', () => {
      setTimeout(() => {
        if (!this.stalled) to.destroy();
      }, this.oneWayMs);
    });
  }
}
