/**
 * A compile-time check that a schema's type is the type it is bound to (a machine's record, a
 * service's answer): a field changed in one place alone fails to compile where it is used.
 */

/** True when each of A and B is the other (readonly aside), keys too (an optional one as well). */
export type Same<A, B> = [A, keyof A] extends [B, keyof B] ? ([B, keyof B] extends [A, keyof A] ? true : false) : false;
/** Compiles only for `true`. */
export type Holds<T extends true> = T;
