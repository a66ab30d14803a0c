/**
 * The sleeping phone and the idle phone of the days soak (bench/days-phones.ts says what each
 * does). The sleeping phone's link is the phone shaper's LTE profile (bench/shaper.ts): a wake
 * is timed from the moment its socket is made until it has caught up with what the streaming
 * phone had at that moment (the delta, or the snapshot, through 60 ms of round trip and 20 Mbit/s).
 */
import { ByteRecord, newTerm, screenDiff, screenOf, settled, StreamClient, type LiveSession, type StreamingPhone } from './days-phones.js';
import { sleep } from './figures.js';

/** What the bench lends the phones: tmux's own screen of a session, and a hold on its program. */
export interface PaneAccess {
  /** tmux's visible screen (capture-pane) and cursor. */
  screen(session: string): Promise<{ rows: string[]; cursor: [number, number] }>;
  /** Stops the session's program printing until released (the pane goes still). */
  hold(session: string): Promise<() => void>;
}

export interface WakeFigures {
  /** Resumes from a position (delta or snapshot), ms from the socket's creation to caught up. */
  readonly resumeMs: number[];
  /** First connects (no position yet). */
  readonly freshMs: number[];
  /** Resumes answered with a delta, and with a snapshot (the position fell out of the ring). */
  deltas: number;
  snapshots: number;
  /** Delta chunks compared byte for byte with the streaming phone's, the bytes, and mismatches. */
  deltaChunksChecked: number;
  deltaBytesChecked: number;
  deltaMismatches: number;
  /** Chunks that did not start where the last ended. */
  gaps: number;
  /** Bytes the streaming phone's record no longer held when compared (not judged). */
  unverifiable: number;
  /** Snapshots whose screen (with what followed) was compared with tmux's, and those that differed. */
  screensChecked: number;
  screenMismatches: number;
  /** Resumes that did not catch up within the bound. */
  timeouts: number;
  readonly problems: string[];
  wakes: number;
}

interface Held {
  lastSeq: number | null;
}

/** The sleeping phone: `sessions` (replaced by `pick` when one is gone) through the shaped link at `wsBase`. */
export class SleepingPhone {
  readonly figures: WakeFigures = {
    resumeMs: [],
    freshMs: [],
    deltas: 0,
    snapshots: 0,
    deltaChunksChecked: 0,
    deltaBytesChecked: 0,
    deltaMismatches: 0,
    gaps: 0,
    unverifiable: 0,
    screensChecked: 0,
    screenMismatches: 0,
    timeouts: 0,
    problems: [],
    wakes: 0,
  };
  private readonly positions = new Map<string, Held>();
  /** When it last went to sleep and last woke (ms, performance.now()). */
  asleepSince = performance.now();
  awakeSince: number | null = null;

  constructor(
    private readonly wsBase: string,
    private readonly token: string,
    private readonly deflate: boolean,
    private readonly live: StreamingPhone,
    private readonly panes: PaneAccess,
    readonly sessions: string[],
    /** Cuts the phone's link as a radio that goes: the daemon hears nothing (ShapingProxy.strand). */
    private readonly strand: () => void,
  ) {}

  private problem(p: string): void {
    if (this.figures.problems.length < 50) this.figures.problems.push(p);
  }

  /** Wakes, resumes on each session, stays `awakeMs`, checks what it got, and sleeps again (its link cut without a word to the daemon). */
  async wake(awakeMs: number): Promise<void> {
    this.figures.wakes++;
    this.awakeSince = performance.now();
    const names = this.sessions.filter((s) => this.live.sessions.has(s));
    const opened = names.map((name) => this.resume(name));
    const results = await Promise.all(opened);
    await sleep(awakeMs);
    for (const r of results) this.positions.set(r.name, { lastSeq: r.client.lastSeq });
    this.asleepSince = performance.now();
    this.awakeSince = null;
    for (const r of results) r.client.dropped = true;
    this.strand();
    await Promise.all(results.map((r) => r.client.closed));
    for (const r of results) await this.check(r);
  }

  private async resume(name: string): Promise<Resumed> {
    const from = this.positions.get(name)?.lastSeq ?? null;
    const live = this.live.sessions.get(name)!;
    const target = live.record.end;
    const client = new StreamClient({ wsBase: this.wsBase, token: this.token, session: name, lastSeq: from, deflate: this.deflate });
    const r: Resumed = { name, from, client, chunks: [], snapshot: null, afterSnapshot: [], caughtUp: 0 };
    let expected = from;
    const caught = (): void => {
      if (r.caughtUp === 0 && client.metaAt > 0 && (client.lastSeq ?? -1) >= target) r.caughtUp = performance.now();
    };
    client.onMeta = caught;
    client.onSnapshot = (seq, bytes) => {
      r.snapshot = { seq, bytes };
      r.afterSnapshot = [];
      expected = seq;
      caught();
    };
    client.onChunk = (start, seq, data) => {
      if (expected !== null && start !== expected) {
        this.figures.gaps++;
        this.problem(`${name}: a chunk at ${start} after ${expected}`);
      }
      expected = seq;
      if (r.snapshot) r.afterSnapshot.push(data);
      else r.chunks.push({ start, data });
      client.lastSeq = seq;
      caught();
    };
    const deadline = performance.now() + 10_000;
    while (r.caughtUp === 0 && performance.now() < deadline && client.closeCode === null) await sleep(5);
    if (r.caughtUp === 0) {
      this.figures.timeouts++;
      this.problem(`${name}: not caught up in 10 s (from ${from}, target ${target}, at ${client.lastSeq})`);
    } else {
      const ms = r.caughtUp - client.createdAt;
      if (from === null) this.figures.freshMs.push(ms);
      else {
        this.figures.resumeMs.push(ms);
        if (r.snapshot) this.figures.snapshots++;
        else this.figures.deltas++;
      }
    }
    return r;
  }

  /** Compares what one resume got: each delta chunk with the streaming phone's bytes; a snapshot's screen with tmux's. */
  private async check(r: Resumed): Promise<void> {
    const live = this.live.sessions.get(r.name);
    if (!live) return;
    const last = r.chunks.at(-1);
    if (last) {
      const end = last.start + last.data.length;
      const until = performance.now() + 5000;
      while (live.record.end < end && performance.now() < until) await sleep(20);
    }
    for (const c of r.chunks) {
      const want = live.record.range(c.start, c.start + c.data.length);
      if (want === null) {
        this.figures.unverifiable += c.data.length;
        continue;
      }
      this.figures.deltaChunksChecked++;
      this.figures.deltaBytesChecked += c.data.length;
      if (!want.equals(c.data)) {
        this.figures.deltaMismatches++;
        this.problem(`${r.name}: delta bytes at ${c.start} differ from the streaming phone's`);
      }
    }
    if (r.snapshot) await this.checkSnapshot(r, live);
  }

  /** The screen after the snapshot (and the chunks that followed it) against tmux's, with the pane held still. */
  private async checkSnapshot(r: Resumed, live: LiveSession): Promise<void> {
    const release = await this.panes.hold(r.name);
    try {
      // The pane is still once the streaming phone's position no longer moves; a loaded bench may
      // read late, so a difference is looked at again a few times before it counts.
      let diff: string | null = null;
      for (let attempt = 0; attempt < 4; attempt++) {
        let seen = -1;
        for (let i = 0; i < 100 && seen !== live.record.end; i++) {
          seen = live.record.end;
          await sleep(300 + attempt * 700);
        }
        const from = r.client.lastSeq ?? 0;
        const tail = live.record.range(from, live.record.end);
        if (tail === null) {
          this.figures.unverifiable++;
          return;
        }
        const term = newTerm();
        term.write(new Uint8Array(r.snapshot!.bytes));
        for (const d of r.afterSnapshot) term.write(new Uint8Array(d));
        term.write(new Uint8Array(tail));
        await settled(term);
        const mine = screenOf(term);
        term.dispose();
        diff = screenDiff(mine, await this.panes.screen(r.name));
        if (diff === null) break;
      }
      this.figures.screensChecked++;
      if (diff !== null) {
        this.figures.screenMismatches++;
        this.problem(`${r.name}: the screen after a snapshot differs from tmux's: ${diff}`);
      }
    } finally {
      release();
    }
  }

  /** The session is gone: another takes its place. */
  replace(gone: string, next: string): void {
    const i = this.sessions.indexOf(gone);
    if (i >= 0) this.sessions[i] = next;
    this.positions.delete(gone);
  }
}

interface Resumed {
  readonly name: string;
  readonly from: number | null;
  readonly client: StreamClient;
  readonly chunks: { start: number; data: Buffer }[];
  snapshot: { seq: number; bytes: Buffer } | null;
  afterSnapshot: Buffer[];
  caughtUp: number;
}

/** The idle phone: a stream on one idle session, keepalives only. */
export class IdlePhone {
  client: StreamClient;
  /** Closes the daemon chose (the phone never closes it). */
  drops = 0;
  readonly nextByteMs: number[] = [];
  private waiting: (() => void) | null = null;
  private readonly record = new ByteRecord(1 << 16);

  constructor(
    private readonly wsBase: string,
    private readonly token: string,
    private readonly session: string,
    private readonly deflate: boolean,
  ) {
    this.client = this.open(null);
  }

  private open(lastSeq: number | null): StreamClient {
    const c = new StreamClient({ wsBase: this.wsBase, token: this.token, session: this.session, lastSeq, deflate: this.deflate });
    c.onChunk = (_start, _seq, data) => {
      this.record.append(data);
      this.waiting?.();
    };
    void c.closed.then(() => {
      if (c.dropped) return;
      this.drops++;
      this.client = this.open(c.lastSeq);
    });
    return c;
  }

  get opened(): Promise<void> {
    return new Promise((resolve) => {
      const check = (): void => (this.client.metaAt > 0 ? resolve() : void setTimeout(check, 20));
      check();
    });
  }

  /** Types into the idle session (`type`, through tmux) and times the first byte the phone gets after. */
  async nextByte(type: () => Promise<void>): Promise<number> {
    const got = new Promise<void>((resolve) => (this.waiting = resolve));
    const start = performance.now();
    await type();
    await Promise.race([got, sleep(10_000)]);
    this.waiting = null;
    const ms = performance.now() - start;
    this.nextByteMs.push(ms);
    return ms;
  }

  close(): Promise<void> {
    return this.client.drop();
  }
}
