/**
 * The account usage windows in pi's model API answers (docs/agents.md "Usage"): pi hands its
 * extensions each HTTP response's headers (`after_provider_response`), and a subscription's
 * answers carry Anthropic's `anthropic-ratelimit-unified-*` or Codex's `x-codex-*` figures. The
 * `usage` message for the daemon is made of them here.
 *
 * Invariant: a message made here is one the daemon reads (a window its decoder would refuse is
 * left out, never sent: a bad line closes the extension's connection); a percent that is not a
 * number crosses as null, as the wire says (JSON writes NaN so).
 */
import type { UsageReading } from '../agent/contract/usage.js';
import { usageFromHeaders } from '../agent/pi/usage-headers.js';
import { decodeUsageMessage, MAX_USAGE_WINDOWS, type UsageMessage } from '../agent/wire/usage-message.js';

/** An `after_provider_response` event's headers as text by lowercased name; null when it has none. */
export function responseHeaders(headers: unknown): Record<string, string> | null {
  if (!headers || typeof headers !== 'object' || Array.isArray(headers)) return null;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (typeof value === 'string') out[name.toLowerCase()] = value;
  }
  return out;
}

/** Whether the daemon reads `window` (its name a short word, its numbers numbers or null). */
function readable(window: UsageReading): boolean {
  try {
    decodeUsageMessage({ windows: [JSON.parse(JSON.stringify(window)) as unknown] });
    return true;
  } catch {
    return false;
  }
}

/** The `usage` message an answer's headers give, or null when they give no window. */
export function usageMessageOf(headers: unknown): UsageMessage | null {
  const read = responseHeaders(headers);
  const report = read && usageFromHeaders(read);
  if (!report) return null;
  const windows = report.windows
    .map((w) => ({
      name: w.name,
      usedPercent: Number.isFinite(w.usedPercent) ? w.usedPercent : Number.NaN,
      resetsAt: w.resetsAt !== null && Number.isFinite(w.resetsAt) ? w.resetsAt : null,
    }))
    .filter(readable)
    .slice(0, MAX_USAGE_WINDOWS);
  return windows.length > 0 ? { type: 'usage', windows } : null;
}
