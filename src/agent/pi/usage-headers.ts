/**
 * The usage windows in a model API's answer headers, as pi's tether extension reads them (docs/agents.md
 * "Usage"): pi talks to many providers, and hands an extension each answer's headers
 * (`after_provider_response`), so the extension reads the two kinds of rate-limit headers a
 * subscription's answers carry. Pure.
 */
import { epochMsOfSeconds, numberOf, windowName, type UsageReading, type UsageReport } from '../contract/usage.js';

/**
 * The windows the rate-limit headers of a model API's answer give: Anthropic's subscription
 * headers (`anthropic-ratelimit-unified-5h-utilization`, a fraction of 1, and `-5h-reset`, unix
 * seconds; the same for `-7d-`) and Codex's (`x-codex-primary-used-percent`, `-window-minutes`,
 * `-reset-at`; the same for `secondary`). `headers` are lowercased names. Null when none is there.
 */
export function usageFromHeaders(headers: Readonly<Record<string, string>>): UsageReport | null {
  const windows: UsageReading[] = [];
  for (const [key, name] of [
    ['5h', 'five_hour'],
    ['7d', 'seven_day'],
  ] as const) {
    const used = headers[`anthropic-ratelimit-unified-${key}-utilization`];
    if (used === undefined) continue;
    windows.push({
      name,
      usedPercent: numberOf(used) * 100,
      resetsAt: epochMsOfSeconds(headers[`anthropic-ratelimit-unified-${key}-reset`]),
    });
  }
  for (const which of ['primary', 'secondary'] as const) {
    const used = headers[`x-codex-${which}-used-percent`];
    if (used === undefined) continue;
    const minutes = numberOf(headers[`x-codex-${which}-window-minutes`]);
    windows.push({
      name: Number.isInteger(minutes) && minutes > 0 ? windowName(minutes) : which,
      usedPercent: numberOf(used),
      resetsAt: epochMsOfSeconds(headers[`x-codex-${which}-reset-at`]),
    });
  }
  return windows.length > 0 ? { windows } : null;
}
