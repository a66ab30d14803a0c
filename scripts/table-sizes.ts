/**
 * What the daemon's bounded tables hold when full, measured on the real classes (#47): each
 * session's prompts (the newest LISTED_DECIDED_PROMPTS decided, REMEMBERED_PROMPT_IDS older ids,
 * and a digest of what was last written to tmux) and the ask desk's MAX_CLOSED_ASKS closed asks, filled with
 * records like the days soak's (bench/days-agents.ts). The days run's heap rises while these fill
 * (hours at its pace); this says by how much at most, so the rise can be told from a leak.
 *
 *   node --expose-gc --import tsx scripts/table-sizes.ts [sessions]
 */
import { AskDesk, MAX_CLOSED_ASKS } from '../src/agent/asks/asks.js';
import { claudePermission } from '../src/agent/claude/asks.js';
import { LISTED_DECIDED_PROMPTS, promptDigest, REMEMBERED_PROMPT_IDS, type PromptRecord } from '../src/protocol/prompt.js';
import type { StoredPrompts } from '../src/protocol/prompt.schemas.js';
import type { PromptDeps } from '../src/service/prompts/prompt-deps.js';
import { SessionPrompts } from '../src/service/prompts/prompt-queue.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

/** Heap used after a full collection, bytes. */
function settled(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

const sessions = Number(process.argv[2] ?? 100);
const mb = (bytes: number): string => (bytes / 1e6).toFixed(2);

/** A session's prompts with every table full: restored as tmux would hand them back. */
function fullPrompts(session: string): SessionPrompts {
  const at = (k: number): string => new Date(Date.UTC(2026, 11, 5) + k * 60_000).toISOString();
  const text = (k: number): string => `days prompt ${k} for ${session}: carry on with the next part`;
  const record = (k: number): PromptRecord => ({
    id: `p-${session}-${k}`,
    text: text(k),
    by: 'days-phone',
    status: 'submitted',
    createdAt: at(k),
    decidedAt: at(k + 1),
  });
  const older = Array.from({ length: REMEMBERED_PROMPT_IDS }, (_, k) => ({
    id: `p-${session}-${k}`,
    digest: promptDigest(text(k)),
    status: 'submitted' as const,
    by: 'days-phone',
    createdAt: at(k),
  }));
  const stored: StoredPrompts = {
    v: 1,
    prompts: Array.from({ length: LISTED_DECIDED_PROMPTS }, (_, k) => record(REMEMBERED_PROMPT_IDS + k)),
    older,
  };
  // A queue of decided prompts only never calls on its deps.
  const queue = new SessionPrompts(session, {} as PromptDeps);
  queue.restore(JSON.parse(JSON.stringify(stored)) as StoredPrompts);
  return queue;
}

/** The ask desk with MAX_CLOSED_ASKS permission asks answered from the phone and closed. */
function fullDesk(): AskDesk {
  const desk = new AskDesk(Date.now);
  for (let k = 0; k < MAX_CLOSED_ASKS + 8; k++) {
    const session = `days-${String(k % sessions).padStart(2, '0')}`;
    const record = desk.opened(session, 'claude', claudePermission({ tool_name: 'Bash', concern: `npm test -- --run ${session}-${k}` }))!;
    desk.claim(session, record.open.ask.id, 'yes', { by: 'days-phone', tokenId: 'tok-days' });
    desk.typed(record);
    desk.ended(session, record.open.ask.id);
  }
  return desk;
}

const base = settled();
const prompts = Array.from({ length: sessions }, (_, i) => fullPrompts(`days-${String(i).padStart(2, '0')}`));
const withPrompts = settled();
// Both tables stay reachable through `tables` until the figures are printed.
const tables = { prompts, desk: fullDesk() };
const withAsks = settled();
console.log(
  `${tables.prompts.length} sessions' prompt tables full (${LISTED_DECIDED_PROMPTS} decided, ${REMEMBERED_PROMPT_IDS} older ids each): ${mb(withPrompts - base)} MB of heap`,
);
console.log(`${MAX_CLOSED_ASKS} closed asks: ${mb(withAsks - withPrompts)} MB of heap`);
