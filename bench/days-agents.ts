/**
 * The agents of the days soak (bench/days.bench.ts): for each session, a small "brain" in the
 * bench that plays an agent at work through the hours. It tells the pane's program
 * (bench/days-agent.ts) what to print and reports what it does through the daemon's agent socket
 * as the agents' own integrations do (testkit/agent-socket.ts): most sessions as pi's extension
 * (a lasting connection: turns, tools, stops), some as Claude Code's hooks (a report per event:
 * prompts, tools, permission asks answered from the phone, the turn's end).
 *
 * A turn: a prompt (from the phone through `POST /sessions/:id/prompt` now and then, else the
 * agent goes on by itself), a few tool steps (a burst of output, then a think with the screen's
 * status panel redrawn in place), sometimes a flood past the ring or a permission ask, then the
 * end (or a stop); then an idle stretch. Every entry into `awaiting-input`, every ask and every
 * stop is recorded, so that the pushes can be checked against them (bench/days-pushes.ts).
 */
import type { BenchDaemon } from './harness.js';
import { sleep } from './figures.js';
import type { PaneProgram } from './days-agent.js';
import { extensionAgent, hookReport, type ExtensionAgent } from '../testkit/agent-socket.js';
import type { PushLedger } from './days-pushes.js';

/** The pace of a run: every duration of the agents' life is multiplied by it (1: as a person's agents go). */
export interface AgentPace {
  readonly idleS: readonly [number, number];
  readonly steps: readonly [number, number];
  readonly burstLines: readonly [number, number];
  readonly burstRate: readonly [number, number];
  readonly thinkS: readonly [number, number];
  /** Chance per turn of a flood past the ring, and its size. */
  readonly floodChance: number;
  readonly floodBytes: number;
  /** Chance per turn of it being started by a prompt from the phone. */
  readonly promptChance: number;
  /** Chance per step (Claude-like sessions) of a permission ask. */
  readonly askChance: number;
  /** Chance per turn (pi-like sessions) of ending in a stop. */
  readonly stopChance: number;
}

export interface AgentStats {
  turns: number;
  steps: number;
  lines: number;
  floods: number;
  prompts: number;
  promptsTyped: number;
  promptsLost: number;
  asks: number;
  answers: number;
  answersLanded: number;
  stops: number;
  refused: number;
  readonly errors: string[];
}

export const newAgentStats = (): AgentStats => ({
  turns: 0,
  steps: 0,
  lines: 0,
  floods: 0,
  prompts: 0,
  promptsTyped: 0,
  promptsLost: 0,
  asks: 0,
  answers: 0,
  answersLanded: 0,
  stops: 0,
  refused: 0,
  errors: [],
});

export interface AgentWorld {
  readonly bd: BenchDaemon;
  readonly pace: AgentPace;
  readonly rand: () => number;
  readonly pushes: PushLedger;
  readonly stats: AgentStats;
}

const between = (rand: () => number, [lo, hi]: readonly [number, number]): number => lo + rand() * (hi - lo);

/** One session's agent. */
export class SessionBrain {
  private running = true;
  private holds = 0;
  private released: (() => void) | null = null;
  private ext: ExtensionAgent | null = null;
  private turn = 0;
  private promptSeq = 0;
  private toolSeq = 0;
  readonly done: Promise<void>;

  constructor(
    private readonly world: AgentWorld,
    readonly session: string,
    readonly kind: 'pi' | 'claude',
    private readonly program: PaneProgram,
    private readonly pane: string,
    /** The first idle stretch is shorter: the sessions do not all start at once. */
    firstIdleS: number,
  ) {
    this.done = this.run(firstIdleS).catch((err: Error) => this.error(`${session}: ${err.message}`));
  }

  private error(message: string): void {
    if (this.world.stats.errors.length < 50) this.world.stats.errors.push(message);
  }

  /** Stops printing (the program's hold too) until the returned function is called. */
  hold(): () => void {
    this.holds++;
    this.program.hold(true);
    let once = false;
    return () => {
      if (once) return;
      once = true;
      if (--this.holds === 0) {
        this.program.hold(false);
        this.released?.();
        this.released = null;
      }
    };
  }

  /** Ends the agent's life: it finishes what it is printing and says nothing more. */
  async stop(): Promise<void> {
    this.running = false;
    this.released?.();
    await this.done;
    this.ext?.close();
  }

  private async gate(): Promise<void> {
    while (this.holds > 0 && this.running) await new Promise<void>((r) => (this.released = r));
  }

  /** Sleeps `s` seconds of the agent's life, or less if the run ends. */
  private async pause(s: number): Promise<void> {
    const end = performance.now() + s * 1000;
    while (this.running && performance.now() < end) await sleep(Math.min(500, end - performance.now()));
  }

  /** Tells the program to do `command` and waits about as long as it takes. */
  private async draw(command: string, seconds: number): Promise<void> {
    await this.gate();
    this.program.send(command);
    const n = this.program.ack();
    const end = performance.now() + seconds * 1000 + 60_000;
    await sleep(seconds * 1000);
    while (!this.program.acked(n) && performance.now() < end) await sleep(200);
  }

  private async hook(fields: Record<string, string>): Promise<void> {
    const answer = await hookReport(this.world.bd.dataDir, 'claude', this.pane, this.world.bd.tmux.socket, {
      session_id: `days-${this.session}`,
      ...fields,
    });
    if (answer.type !== 'ok') {
      this.world.stats.refused++;
      this.error(`${this.session}: hook ${fields.hook_event_name} refused: ${answer.message ?? answer.type}`);
    }
  }

  private async register(): Promise<void> {
    if (this.kind === 'claude') {
      await this.hook({ hook_event_name: 'SessionStart', source: 'startup' });
      return;
    }
    for (let attempt = 0; attempt < 5; attempt++) {
      const ext = extensionAgent(this.world.bd.dataDir, this.pane, this.world.bd.tmux.socket);
      const answer = await ext.welcomed.catch((err: Error) => ({ type: 'failed', message: err.message }));
      if (answer.type === 'welcome') {
        this.ext = ext;
        void ext.closed.then(() => {
          if (this.running && this.ext === ext) this.error(`${this.session}: the agent socket closed`);
        });
        ext.event('agent.ready');
        return;
      }
      ext.close();
      await sleep(1000);
    }
    throw new Error('the agent socket never welcomed the extension');
  }

  private async run(firstIdleS: number): Promise<void> {
    await this.register();
    const w = this.world;
    let idle = firstIdleS;
    while (this.running) {
      await this.pause(idle);
      if (!this.running) break;
      await this.gate();
      await this.oneTurn();
      idle = between(w.rand, w.pace.idleS);
    }
  }

  private async oneTurn(): Promise<void> {
    const w = this.world;
    const { pace, rand, stats } = w;
    this.turn++;
    stats.turns++;
    if (rand() < pace.promptChance) await this.prompted();
    else if (this.kind === 'pi') {
      this.ext?.event('agent.start');
    } else {
      await this.hook({ hook_event_name: 'UserPromptSubmit', prompt: `go on with step ${this.turn}` });
    }
    const steps = Math.round(between(rand, pace.steps));
    for (let s = 0; s < steps && this.running; s++) {
      stats.steps++;
      const id = `t${++this.toolSeq}`;
      if (this.kind === 'pi') this.ext?.event('tool.start', { id, tool: 'bash' });
      else await this.hook({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_use_id: id });
      if (this.kind === 'claude' && rand() < pace.askChance) await this.ask();
      const lines = Math.round(between(rand, pace.burstLines));
      const rate = Math.round(between(rand, pace.burstRate));
      stats.lines += lines;
      await this.draw(`burst ${lines} ${rate}`, lines / rate);
      if (rand() < pace.floodChance / Math.max(1, steps)) {
        stats.floods++;
        await this.draw(`flood ${pace.floodBytes}`, 1);
      }
      if (this.kind === 'pi') this.ext?.event('tool.end', { id });
      else await this.hook({ hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_use_id: id });
      const think = between(rand, pace.thinkS);
      await this.draw(`think ${think.toFixed(1)}`, think);
    }
    // The end of the turn: the agent waits for its person (a push), or stopped (a push of its own).
    if (this.kind === 'pi' && rand() < pace.stopChance) {
      stats.stops++;
      const kind = rand() < 0.5 ? 'error' : 'usage-limit';
      w.pushes.stopped(this.session);
      this.ext?.stop(
        kind,
        kind === 'error' ? `the model API is overloaded (turn ${this.turn})` : `You've hit your limit (turn ${this.turn})`,
      );
    } else {
      w.pushes.entered(this.session);
      if (this.kind === 'pi') this.ext?.event('agent.end', { idle: true });
      else await this.hook({ hook_event_name: 'Stop' });
    }
  }

  /** The turn starts with a prompt from the phone: tether types it when the agent waits; the agent reports it taken. */
  private async prompted(): Promise<void> {
    const { bd, stats } = this.world;
    const k = ++this.promptSeq;
    const text = `days prompt ${k} for ${this.session}: carry on with the next part`;
    stats.prompts++;
    const before = this.program.typed().length;
    const res = await bd.request('POST', `/sessions/${this.session}/prompt`, { text, id: `p-${this.session}-${k}` });
    if (res.status !== 202 && res.status !== 200) {
      this.error(`${this.session}: POST /prompt ${res.status} ${res.text.slice(0, 200)}`);
      return;
    }
    const end = performance.now() + 20_000;
    while (performance.now() < end && !this.program.typed().slice(before).includes(text)) await sleep(200);
    if (!this.program.typed().slice(before).includes(text)) {
      stats.promptsLost++;
      this.error(`${this.session}: prompt ${k} never reached the pane`);
    } else stats.promptsTyped++;
    if (this.kind === 'pi') {
      this.ext?.userMessage(text);
      this.ext?.event('agent.start');
    } else await this.hook({ hook_event_name: 'UserPromptSubmit', prompt: text });
  }

  /** A permission ask: the dialog drawn, the hook's report, the phone's answer (`yes`), the tool runs. */
  private async ask(): Promise<void> {
    const { bd, stats, rand } = this.world;
    stats.asks++;
    await this.draw(`dialog ${this.turn}`, 0.05);
    await this.hook({ hook_event_name: 'PermissionRequest', tool_name: 'Bash', concern: `npm test -- --run ${this.session}-${this.turn}` });
    const view = await bd.request('GET', `/sessions/${this.session}`);
    const askId = (JSON.parse(view.text) as { ask?: { id: string } | null }).ask?.id;
    if (!askId) {
      this.error(`${this.session}: no ask after PermissionRequest (${view.text.slice(0, 200)})`);
      return;
    }
    this.world.pushes.asked(this.session, askId);
    await sleep(500 + rand() * 1500);
    stats.answers++;
    const res = await bd.request('POST', `/sessions/${this.session}/answer`, { ask: askId, choice: 'yes' });
    if (res.status !== 200) this.error(`${this.session}: POST /answer ${res.status} ${res.text.slice(0, 200)}`);
    else if ((JSON.parse(res.text) as { landed: boolean }).landed) stats.answersLanded++;
  }
}
