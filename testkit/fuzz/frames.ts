/**
 * The frame surface: after a real upgrade (with the token) to each WebSocket route of the table,
 * the runs of frame-runs.ts.
 *
 * What the daemon must do is what RFC 6455 and docs/api.md say (ws-model.ts): close with the
 * protocol's code at the first fault; echo a client's close; otherwise keep the socket open,
 * answer each refused message with exactly one `bad-frame` (and only documented error codes),
 * deliver the input that fits to the pane and nothing of what it refused.
 */
import fc from 'fast-check';
import { Value } from 'typebox/value';
import { FRAME_ERRORS } from '../../src/errors.js';
import { ClientFrames } from '../../src/protocol/frames.schemas.js';
import { illFormedAt } from '../../src/protocol/well-formed.js';
import { build, EARLY_BOUND, WS_LIMITS, type FramesCase } from './frame-runs.js';
import { DOCUMENTED_CLOSE_CODES } from './oracle.js';
import { exchange } from './raw-http.js';
import { closePayload, OP, upgradeHeaders, upgradeRequest, WsReader, type WsConversation, type WsFrame } from './raw-ws.js';
import { FuzzFinding, type FuzzLedger, type FuzzTarget } from './target.js';
import { expectedWsOutcome, type WsMessage } from './ws-model.js';

export { framesCases, type FramesCase } from './frame-runs.js';

/** Whether a text message is a client frame the stream takes (docs/api.md "Client frames"). */
function fitsStream(text: string): boolean {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return false;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const type = (v as { type?: unknown }).type;
  const schema =
    typeof type === 'string' && Object.hasOwn(ClientFrames, type) ? ClientFrames[type as keyof typeof ClientFrames] : undefined;
  if (!schema || illFormedAt(v) !== null || !Value.Check(schema, v)) return false;
  return !(type === 'paste' && (v as { data: string }).data.includes('\u0000'));
}

const errorsOf = (cv: WsConversation): { code: string; message: string }[] =>
  cv.texts.flatMap((s) => {
    try {
      const f = JSON.parse(s) as { type?: string; code?: string; message?: string };
      return f.type === 'error' ? [{ code: String(f.code), message: String(f.message) }] : [];
    } catch {
      return [{ code: 'not-json', message: s.slice(0, 100) }];
    }
  });

const close1000: WsFrame = { fin: true, rsv: 0, opcode: OP.close, masked: true, payload: closePayload(1000) };

export async function runFramesCase(t: FuzzTarget, ledger: FuzzLedger, c: FramesCase, opts: { timeoutMs: number }): Promise<void> {
  const { frames, markers } = build(c, ledger);
  const kind = c.route.url.endsWith('/stream') ? 'stream' : c.route.url.endsWith('/side') ? 'side' : 'ops';
  const path = c.route.url.replace(':id', t.live[0]!);
  const offer: [string, string][] = c.deflate
    ? [['Sec-WebSocket-Extensions', 'permessage-deflate; client_no_context_takeover; server_no_context_takeover']]
    : [];
  const ex = await exchange(t.peer, upgradeRequest(path, [...upgradeHeaders(t.host, offer), ['Authorization', `Bearer ${t.token}`]]), {
    timeoutMs: opts.timeoutMs,
    keepOpen: true,
  });
  try {
    const res = ex.responses[0];
    if (res?.status !== 101)
      throw new FuzzFinding('a good upgrade was not switched', {
        answers: ex.responses.map((r) => ({ status: r.status, body: r.body })),
        error: ex.error,
      });
    const reader = new WsReader(ex.socket, ex.rest);
    const deflate = c.deflate && (res.headers['sec-websocket-extensions'] ?? '').includes('permessage-deflate');
    // The run ends with a frame whose answer comes after every earlier one's (then all of them
    // were handled): an unknown key on a stream or side channel, a close on /ops/events. The
    // model reads it too: after a message left unfinished it is itself a fault.
    const sentinel = `fzs${ledger.marker().replace(/\W/g, '')}`.slice(0, 32);
    const last: WsFrame =
      kind === 'ops'
        ? close1000
        : { fin: true, rsv: 0, opcode: OP.text, masked: true, payload: Buffer.from(JSON.stringify({ type: 'key', name: sentinel })) };
    const outcome = expectedWsOutcome([...frames, last], { ...WS_LIMITS, deflate });
    const { messages } = outcome;
    const early = c.early && messages.length <= EARLY_BOUND;
    if (!early && kind !== 'ops' && !(await reader.until((cv) => cv.texts.some((x) => x.includes('"session-meta"')), opts.timeoutMs)))
      throw new FuzzFinding('an upgraded stream sent no session-meta', { conversation: reader.seen() });
    for (const f of [...frames, last]) reader.send(f);
    // The messages the daemon must refuse, each with one bad-frame (on a side channel, all of them).
    const takes = (m: WsMessage) => kind === 'stream' && !m.binary && fitsStream(m.data.toString('utf8'));
    const refusedByApp = kind === 'ops' ? 0 : messages.filter((m) => !takes(m)).length;
    const evidence = {
      route: c.route.url,
      deflate,
      early,
      outcome: { ...outcome, messages: messages.map((m) => m.data.subarray(0, 200)) },
    };
    if (outcome.kind === 'open') {
      const answered = (cv: WsConversation) =>
        kind === 'stream'
          ? errorsOf(cv).some((e) => e.message.includes(sentinel))
          : errorsOf(cv).filter((e) => e.code === 'bad-frame').length >= refusedByApp;
      if (!(await reader.until(answered, opts.timeoutMs)))
        throw new FuzzFinding('the socket stopped answering: its last frame was never answered', { ...evidence, cv: reader.seen() });
      const bad = errorsOf(reader).filter((e) => e.code === 'bad-frame').length;
      if (bad !== refusedByApp)
        throw new FuzzFinding(`${bad} bad-frame errors for ${refusedByApp} refused messages`, { ...evidence, cv: reader.seen() });
      reader.send(close1000);
      await reader.until(() => false, opts.timeoutMs);
      if (reader.closeCode !== 1000)
        throw new FuzzFinding(`a polite close was answered with ${reader.closeCode}`, { ...evidence, cv: reader.seen() });
    } else {
      await reader.until(() => false, opts.timeoutMs);
      if (reader.closeCode !== outcome.code)
        throw new FuzzFinding(`the socket closed with ${reader.closeCode}, not ${outcome.code}`, { ...evidence, cv: reader.seen() });
      if (outcome.kind === 'refused' && !DOCUMENTED_CLOSE_CODES.has(outcome.code))
        throw new FuzzFinding(`close code ${outcome.code} is not documented`, { ...evidence, cv: reader.seen() });
    }
    ledger.count('frames', `${kind}:${outcome.kind === 'open' ? 'open' : outcome.code}`);
    const unknown = errorsOf(reader).filter((e) => !(FRAME_ERRORS as readonly string[]).includes(e.code));
    if (unknown.length > 0) throw new FuzzFinding('error frames with codes the registry does not have', { ...evidence, unknown });
    // Input the daemon took reaches the pane, all of it; what it did not take never does. Frames
    // kept before the stream opened are dropped with a socket that closes meanwhile: not known.
    for (const [marker, typed] of markers) {
      const m = messages.find((x) => x.data.includes(marker));
      ledger.origin.set(marker, fc.stringify({ ...evidence, case: c }).slice(0, 3000));
      if (m && early && outcome.kind !== 'open') ledger.unknown.add(marker);
      else if (m && takes(m)) ledger.delivered.set(marker, typed ?? Buffer.from(marker));
      else ledger.refused.add(marker);
    }
    const crashes = t.crashes();
    if (crashes.length > 0) throw new FuzzFinding('the daemon raised an error nothing caught', { ...evidence, crashes });
  } finally {
    ex.socket.destroy();
  }
}
