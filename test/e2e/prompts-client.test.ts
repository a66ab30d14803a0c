/**
 * The reference client's prompts (docs/client.md "Prompts"), end to end: the built daemon on a
 * private tmux server, its session running a plain shell, a real WebSocket. A prompt sent with
 * `prompt()` is typed once and comes back `typed`, its command run by the shell; a second stream
 * and the side channel see its `prompt` frames; one id sent three times (twice over REST, once
 * over the stream) is typed once; a prompt whose answers were lost with a dropped connection is
 * sent again on the next one and is typed once; blank text, an escape and an id conflict are
 * refused as `error` frames, each rejecting its own prompt, and nothing is typed for them.
 *
 * What a prompt ran is counted in files (`echo line >> file`): each command a prompt typed adds
 * one line, and a last prompt, typed after every earlier one (they are typed in order), shows
 * that nothing came later.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { PromptError, SessionStream, type PromptRecord, type SentPrompt } from '../../src/reference-client/index.js';
import { explainedBy } from '../helpers/daemon.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { shows, type Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';

const SESSION = 'sh-prompts';
/** Bounds for a busy two-core machine: a wait that passes costs only as long as its condition takes. */
const WAIT_MS = 20_000;
const TEST_MS = 60_000;

const files = mkdtempSync(join(tmpdir(), 'tether-prompts-client-'));
afterAll(() => rmSync(files, { recursive: true, force: true }));
/** The lines of `name` in the test's folder (none when it does not exist). */
const linesOf = (name: string): string[] => {
  try {
    return readFileSync(join(files, name), 'utf8').split('\n').slice(0, -1);
  } catch {
    return [];
  }
};
/** A shell command that adds `line` to `name`. */
const append = (name: string, line: string) => `echo ${line} >> ${join(files, name)}`;

/**
 * A TCP proxy to the daemon whose way back to the client can be held (the daemon's bytes
 * dropped, never delivered) and whose connections can be cut: a phone's link that lost the answers.
 */
class HoldingProxy {
  private readonly server = net.createServer((client) => this.carry(client));
  private readonly sockets = new Set<net.Socket>();
  private holding = false;

  constructor(private readonly targetPort: number) {}

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  /** From now on, what the daemon sends is dropped, until `cut`: the client hears nothing more on these connections. */
  hold(): void {
    this.holding = true;
  }

  /** Cuts every open connection (what was held is lost); new connections carry both ways. */
  cut(): void {
    this.holding = false;
    for (const s of this.sockets) s.destroy();
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private carry(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        this.sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (data: Buffer) => upstream.write(data));
    upstream.on('data', (data: Buffer) => {
      if (!this.holding) client.write(data);
    });
  }
}

describe("the reference client's prompts, to a plain shell", () => {
  const fx = useDaemon(`[agent]\ncommand = "/bin/sh"\ndefault_session = "${SESSION}"\n`);
  const paneText = () => fx.tmux.capture(`=${SESSION}:`);
  const listed = async (): Promise<PromptRecord[]> => (await (await fx.d.get(`/sessions/${SESSION}/prompts`)).json()) as PromptRecord[];
  /** A mirror of the session, streaming (its snapshot applied). */
  const streaming = async (): Promise<Mirror> => {
    const m = fx.mirror(SESSION);
    await eventually(() => m.stream.status === 'open' && m.stream.lastSeq !== null, WAIT_MS, 25, 'the stream open with its snapshot');
    return m;
  };
  /** The prompt's `decided`, or a failure after `ms` saying what was last heard of it. */
  const settled = (sent: SentPrompt, ms = WAIT_MS): Promise<PromptRecord> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`prompt ${sent.id} not settled in ${ms} ms; last heard ${JSON.stringify(sent.record)}`)),
        ms,
      );
    });
    return Promise.race([sent.decided, late]).finally(() => clearTimeout(timer));
  };
  /** The prompt's decision, or the test fails saying what the daemon logged. */
  const decided = (sent: SentPrompt): Promise<PromptRecord> => explainedBy(fx.d, settled(sent));
  /** How the prompt was refused: its PromptError's code (the test fails if it was decided). */
  const refusal = async (sent: SentPrompt): Promise<string> => {
    const err = await settled(sent).then(
      (record) => new Error(`prompt ${sent.id} was not refused: ${JSON.stringify(record)}`),
      (e: unknown) => e,
    );
    if (!(err instanceof PromptError)) throw err;
    expect(err.id).toBe(sent.id);
    return err.code;
  };

  beforeAll(async () => {
    await eventually(async () => /^[#$]( |$)/m.test(await paneText()), WAIT_MS, 50, 'the shell prompt in the pane');
  });

  it('types a prompt once: it comes back typed, and the shell ran it', { timeout: TEST_MS }, async () => {
    const m = await streaming();
    const changes: string[] = [];
    const sent = m.stream.prompt('echo tether-said-$((6*7))');
    sent.on('change', (r) => changes.push(r.status));
    expect(sent.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const record = await decided(sent);
    expect(record).toMatchObject({ id: sent.id, text: 'echo tether-said-$((6*7))', status: 'typed' });
    expect(changes).toEqual(['queued', 'typing', 'typed']);
    await shows(m, ['tether-said-42'], WAIT_MS, 'the shell output on the client screen');
    expect((await paneText()).match(/^tether-said-42$/gm)).toHaveLength(1);
  });

  it('shows its prompt frames to a second stream and to the side channel', { timeout: TEST_MS }, async () => {
    const [sender, other] = [await streaming(), await streaming()];
    const otherSaw: PromptRecord[] = [];
    other.stream.on('prompt', (f) => otherSaw.push(f.prompt));
    const sideUrl = `${fx.d.base.replace(/^http/, 'ws')}/sessions/${SESSION}/side`;
    const side = new WebSocket(sideUrl, { headers: { authorization: `Bearer ${fx.d.token}` } });
    const sideSaw: { type: string; prompt?: PromptRecord }[] = [];
    side.on('message', (data: Buffer) => sideSaw.push(JSON.parse(data.toString('utf8')) as { type: string; prompt?: PromptRecord }));
    try {
      await eventually(() => sideSaw.some((f) => f.type === 'session-meta'), WAIT_MS, 25, 'the side channel open');
      const sent = sender.stream.prompt(append('seen', 'seen'), { id: 'seen-by-all' });
      expect(await decided(sent)).toMatchObject({ status: 'typed' });
      const statuses = (frames: readonly PromptRecord[]) => frames.filter((p) => p.id === 'seen-by-all').map((p) => p.status);
      await eventually(() => statuses(otherSaw).at(-1) === 'typed', WAIT_MS, 25, 'the other stream told it was typed');
      await eventually(
        () => statuses(sideSaw.flatMap((f) => (f.type === 'prompt' && f.prompt ? [f.prompt] : []))).at(-1) === 'typed',
        WAIT_MS,
        25,
        'the side channel told it was typed',
      );
      expect(statuses(otherSaw)).toEqual(['queued', 'typing', 'typed']);
      expect(otherSaw.at(-1)).toEqual(sent.record);
      await eventually(() => linesOf('seen').length > 0, WAIT_MS, 25, 'the shell to run the prompt');
      expect(linesOf('seen')).toEqual(['seen']);
    } finally {
      side.close();
    }
  });

  it('types one id once though it came twice over REST and once over the stream', { timeout: TEST_MS }, async () => {
    const body = { text: append('thrice', 'line'), id: 'thrice' };
    const first = await fx.json('POST', `/sessions/${SESSION}/prompt`, body);
    expect(first.status, await first.clone().text()).toBe(202);
    const record = (await first.json()) as PromptRecord;
    const again = await fx.json('POST', `/sessions/${SESSION}/prompt`, body);
    expect(again.status, await again.clone().text()).toBe(200);
    const same = (await again.json()) as PromptRecord;
    // The prompt as it stands (its status may have moved on): the same prompt, not a new one.
    expect(same).toMatchObject({ id: 'thrice', text: body.text, by: record.by, createdAt: record.createdAt });

    const m = await streaming();
    const sent = m.stream.prompt(body.text, { id: 'thrice' });
    expect(await decided(sent)).toMatchObject({ id: 'thrice', status: 'typed', createdAt: record.createdAt });
    // A prompt typed after it: anything typed for "thrice" again would have come before.
    expect(await decided(m.stream.prompt(append('thrice', 'after')))).toMatchObject({ status: 'typed' });
    await eventually(() => linesOf('thrice').includes('after'), WAIT_MS, 25, 'the last prompt run');
    expect(linesOf('thrice')).toEqual(['line', 'after']);
    expect((await listed()).filter((p) => p.id === 'thrice')).toHaveLength(1);
  });

  it('sends a prompt again on the next connection when the answers were lost, and it is typed once', { timeout: TEST_MS }, async () => {
    const port = Number(new URL(fx.d.base).port);
    const proxy = new HoldingProxy(port);
    const stream = new SessionStream({
      baseUrl: `http://127.0.0.1:${await proxy.listen()}`,
      token: fx.d.token,
      session: SESSION,
      pingIntervalMs: 600_000,
    });
    const opened: number[] = [];
    stream.on('status', (s) => {
      if (s === 'open') opened.push(Date.now());
    });
    const changes: string[] = [];
    try {
      stream.connect();
      await eventually(() => stream.status === 'open' && stream.lastSeq !== null, WAIT_MS, 25, 'the stream open through the proxy');
      // The daemon's answers are kept from the client: it gets the prompt and types it, the client hears nothing.
      proxy.hold();
      const sent = stream.prompt(append('dropped', 'line'), { id: 'across-a-drop' });
      sent.on('change', (r) => changes.push(r.status));
      await eventually(
        async () => (await listed()).find((p) => p.id === 'across-a-drop')?.status === 'typed',
        WAIT_MS,
        50,
        'the daemon to type the prompt',
      );
      await eventually(() => linesOf('dropped').length > 0, WAIT_MS, 25, 'the shell to run the prompt');
      expect(linesOf('dropped')).toEqual(['line']);
      expect(sent.record).toBeNull();
      expect(opened).toHaveLength(1);

      // The link drops; the client connects again, sends the prompt again, and hears it typed.
      proxy.cut();
      const record = await decided(sent);
      expect(opened).toHaveLength(2);
      expect(record).toMatchObject({ id: 'across-a-drop', status: 'typed' });
      expect(changes).toEqual(['typed']);

      expect(await decided(stream.prompt(append('dropped', 'after')))).toMatchObject({ status: 'typed' });
      await eventually(() => linesOf('dropped').includes('after'), WAIT_MS, 25, 'the last prompt run');
      expect(linesOf('dropped')).toEqual(['line', 'after']);
    } finally {
      stream.close();
      await proxy.close();
    }
  });

  it(
    'rejects blank text, an escape and an id conflict by their error frames, each its own, typing none',
    { timeout: TEST_MS },
    async () => {
      const m = await streaming();
      expect(await decided(m.stream.prompt(append('refused', 'first'), { id: 'taken' }))).toMatchObject({ status: 'typed' });

      // Sent together: one awaits its answer at a time, so each error frame refuses its own prompt.
      const blank = m.stream.prompt(' \n\t ', { id: 'blank' });
      const escaped = m.stream.prompt(`${append('refused', 'escaped-never-typed')}\u001b[31m`, { id: 'escaped' });
      const conflict = m.stream.prompt(append('refused', 'conflict-never-typed'), { id: 'taken' });
      const after = m.stream.prompt(append('refused', 'after'), { id: 'after-refusals' });
      expect(await refusal(blank)).toBe('bad-frame');
      expect(await refusal(escaped)).toBe('bad-frame');
      expect(await refusal(conflict)).toBe('prompt-id-conflict');
      expect(await decided(after)).toMatchObject({ status: 'typed' });
      expect(m.errors().map((e) => e.code)).toEqual(['bad-frame', 'bad-frame', 'prompt-id-conflict']);

      // A held id with another text is refused by the client itself, sent nowhere.
      const held = m.stream.prompt(append('refused', 'held'), { id: 'held' });
      expect(await refusal(m.stream.prompt(append('refused', 'not-held'), { id: 'held' }))).toBe('prompt-id-conflict');
      expect(await decided(held)).toMatchObject({ status: 'typed' });

      await eventually(() => linesOf('refused').includes('held'), WAIT_MS, 25, 'the last prompt run');
      expect(linesOf('refused')).toEqual(['first', 'after', 'held']);
      const ids = (await listed()).map((p) => p.id);
      expect(ids.filter((id) => ['blank', 'escaped', 'taken'].includes(id))).toEqual(['taken']);
      expect((await listed()).find((p) => p.id === 'taken')?.text).toBe(append('refused', 'first'));
      expect(await paneText()).not.toMatch(/never-typed/);
    },
  );
});
