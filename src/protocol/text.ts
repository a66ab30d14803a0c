/**
 * Text as tether shows it or takes it as a name: which characters are control characters, and how
 * a text is cut to a length. One home, so that every place agrees: a device name the route's
 * schema lets through is one the token store keeps (were they to differ on DEL, a 500).
 *
 * A control character is Unicode's category Cc: C0 (U+0000 to U+001F), DEL (U+007F) and C1
 * (U+0080 to U+009F). C1 counts as much as C0: a terminal reading 8-bit controls takes U+009B as
 * CSI, and nothing shows a C1 as anything a person can read.
 */

/** The control characters as the body of a regular expression's character class (also for a JSON schema's `pattern`). */
export const CONTROL_CHAR_RANGES = '\\u0000-\\u001f\\u007f-\\u009f';

const CONTROL_CHAR = new RegExp(`[${CONTROL_CHAR_RANGES}]`);
const CONTROL_CHARS = new RegExp(`[${CONTROL_CHAR_RANGES}]`, 'g');
/** Every control character but the tab. */
const CONTROL_CHARS_BUT_TAB = new RegExp(`(?!\\t)[${CONTROL_CHAR_RANGES}]`, 'g');

/** Whether `text` holds a control character. */
export const hasControlChar = (text: string): boolean => CONTROL_CHAR.test(text);

/** `text` with each control character replaced by `by` (removed by default); `keepTabs` leaves tabs. */
export function replaceControlChars(text: string, by = '', keepTabs = false): string {
  return text.replace(keepTabs ? CONTROL_CHARS_BUT_TAB : CONTROL_CHARS, by);
}

/** `text` cut to at most `max` characters (code points), an ellipsis as the last when it was cut. */
export function cutText(text: string, max: number): string {
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, Math.max(0, max - 1)).join('')}…` : text;
}
