/**
 * Where a hook report's pane is, asked for every report (src/agent/hub/pane-locator.ts): with a
 * session linked, the answer starts no tmux process. A pane the session mirrors is answered from
 * what the session knows, another pane over a control client; a process runs only while no
 * session is linked. The same refusals either way (another tmux server, a pane tmux lacks).
 * Processes are counted by the locator's own TmuxCli, which the daemon's other parts do not share.
 */
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SidecarSystem } from '../../src/actors/system.js';
import { stateEvent } from '../../src/agent/contract/adapter.js';
import { AgentHub } from '../../src/agent/hub/hub.js';
import { PaneLocator } from '../../src/agent/hub/pane-locator.js';
import { AgentSocketServer } from '../../src/agent/hub/socket-server.js';
import { hookReport } from '../../src/agent/wire/hook-send.js';
import type { EventMessage } from '../../src/agent/wire/extension-channel.js';
import { silentLogger } from '../../src/log.js';
import { TmuxCli, type TmuxOutput, type TmuxRunOptions } from '../../src/tmux/exec.js';
import { SESSION_OPTIONS } from '../../src/tmux/layout.js';
import { startLivePane } from '../helpers/live-pane.js';
import { privateTmux, type PrivateTmux } from '../helpers/tmux.js';

/** A TmuxCli that counts the tmux processes it starts. */
class CountingCli extends TmuxCli {
  processes = 0;
  override runList(commands: readonly (readonly string[])[], opts?: TmuxRunOptions): Promise<TmuxOutput> {
    this.processes++;
    return super.runList(commands, opts);
  }
}

/**
 * Sends one hook report as a hook program does (a connection of its own) and resolves with the
 * daemon's answer. `serverPid` is the server's pid in the pane's `$TMUX`, as tmux sets it.
 */
function report(
  socketPath: string,
  pane: string,
  tmuxSocket: string,
  event: EventMessage['event'],
  serverPid: number,
): Promise<{ type: string; message?: string }> {
  const line = hookReport('claude', { e: event }, { TMUX_PANE: pane, TMUX: `${tmuxSocket},${serverPid},0` }, process.pid);
  if (!line) throw new Error(`no report for pane ${pane}`);
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    let buf = '';
    socket.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl === -1) return;
      socket.destroy();
      resolve(JSON.parse(buf.slice(0, nl)) as { type: string; message?: string });
    });
    socket.on('error', reject);
    socket.on('connect', () => socket.write(`${JSON.stringify(line)}\n`));
  });
}

describe('placing hook reports with a session linked', () => {
  let tmux: PrivateTmux;
  let system: SidecarSystem;
  let cli: CountingCli;
  let hub: AgentHub;
  let server: AgentSocketServer;
  let pane: string;
  /** The tmux server's pid, as its panes' `$TMUX` names it. */
  let serverPid: number;
  /** Commands the locator sent over the sessions' control clients. */
  let queries = 0;
  const stopUsing: (() => void)[] = [];

  beforeAll(async () => {
    tmux = await privateTmux();
    ({ system } = await startLivePane(tmux, 'hooked', 'exec cat', { ringBytes: 1 << 20 }));
    pane = (await tmux.tmux('display-message', '-p', '-t', '=hooked:', '#{pane_id}')).trim();
    serverPid = Number((await tmux.tmux('display-message', '-p', '#{pid}')).trim());
    cli = new CountingCli(tmux.target);
    const locator = new PaneLocator(cli, Date.now);
    stopUsing.push(
      locator.useLinkedPanes({
        sessionOfPane: (p) => system.sessionOfPane(p),
        queryTmux: (command) => {
          queries++;
          return system.queryTmux(command);
        },
      }),
    );
    hub = new AgentHub({
      now: Date.now,
      log: silentLogger,
      locate: (p, socket, pid) => locator.locate(p, socket, pid),
      url: () => 'http://127.0.0.1:1/?token=t',
      // Each report carries the event it stands for.
      readers: new Map([
        [
          'claude',
          {
            readHook: (_session: string, fields: Readonly<Record<string, string>>) => ({
              events: [stateEvent(fields.e as EventMessage['event'], fields.e === 'agent.end' ? { idle: true } : {})],
            }),
          },
        ],
      ]),
    });
    server = await AgentSocketServer.listen(join(tmux.dir, 'run', 'agent.sock'), hub, silentLogger);
  }, 30_000);
  afterAll(async () => {
    stopUsing.forEach((undo) => undo());
    await server?.close();
    hub?.stop();
    await system?.stop();
    await tmux.cleanup();
  });

  it('N reports from the pane a linked session mirrors start no tmux process, and send tmux one command in all', async () => {
    expect(system.sessionOfPane(pane)).toEqual({ session: 'hooked', serverPid });
    const N = 40;
    const answers: { type: string }[] = [];
    for (let i = 0; i < N; i++)
      answers.push(await report(server.path, pane, tmux.socket, i % 2 === 0 ? 'agent.start' : 'agent.end', serverPid));
    expect(answers).toEqual(Array.from({ length: N }, () => ({ type: 'ok' })));
    expect(hub.current('hooked')?.value).toBe('awaiting-input');
    expect(cli.processes).toBe(0);
    // The first asks where the pane is (and so learns the server's socket); the rest are known.
    expect(queries).toBe(1);
  });

  it('a pane of a session not adopted yet is placed and its session marked over a control client: still no process', async () => {
    await tmux.tmux('new-session', '-d', '-s', 'mine', '--', 'cat');
    const other = (await tmux.tmux('display-message', '-p', '-t', '=mine:', '#{pane_id}')).trim();
    expect(await report(server.path, other, tmux.socket, 'agent.start', serverPid)).toEqual({ type: 'ok' });
    expect(hub.current('mine')?.value).toBe('thinking');
    expect((await tmux.tmux('show-options', '-v', '-t', '=mine:', SESSION_OPTIONS.pane)).trim()).toBe(other);
    expect((await tmux.tmux('show-options', '-v', '-t', '=mine:', SESSION_OPTIONS.created)).trim()).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(cli.processes).toBe(0);
  });

  it('the refusals stand for a mirrored pane too: another tmux server, a pane tmux lacks', async () => {
    const wrong = await report(server.path, pane, '/tmp/some-other/tmux.sock', 'agent.start', serverPid);
    expect(wrong).toMatchObject({
      type: 'refused',
      message: expect.stringMatching(/tmux server at \/tmp\/some-other\/tmux.sock.*\[tmux\] socket/) as unknown,
    });
    const unknown = await report(server.path, '%9999', tmux.socket, 'agent.start', serverPid);
    expect(unknown).toMatchObject({ type: 'refused', message: expect.stringMatching(/pane %9999 is not on the tmux server/) as unknown });
  });

  it('a report from a tmux server that exited is refused and changes nothing, though the pane id is one the server has now', async () => {
    // An agent killed with its server runs its last hook late: by then the session may be restored
    // on a new server whose pane has the same id. The server's pid in `$TMUX` tells them apart.
    expect(await report(server.path, pane, tmux.socket, 'agent.end', serverPid)).toEqual({ type: 'ok' });
    const gone = serverPid + 1;
    const late = await report(server.path, pane, tmux.socket, 'agent.start', gone);
    expect(late).toMatchObject({
      type: 'refused',
      message: `pane ${pane} was on the tmux server with pid ${gone}, which is not the one tether serves (pid ${serverPid}): the report comes from a server that exited`,
    });
    expect(hub.current('hooked')?.value).toBe('awaiting-input');
  });

  it('with no session linked, the locator asks tmux as a process, and refuses a report of an exited server the same way', async () => {
    const alone = new PaneLocator(cli, Date.now);
    const before = cli.processes;
    expect(await alone.locate(pane, tmux.socket)).toEqual({ session: 'hooked' });
    expect(await alone.locate(pane, tmux.socket, serverPid)).toEqual({ session: 'hooked' });
    expect(await alone.locate(pane, tmux.socket, serverPid + 1)).toEqual({
      refused: expect.stringContaining(`was on the tmux server with pid ${serverPid + 1}`) as unknown,
    });
    expect(cli.processes).toBe(before + 3);
  });
});
