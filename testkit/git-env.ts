/**
 * The environment the tests' and the fuzzer's own git runs take: the caller's without git's own
 * variables (a test run inside a git hook or worktree must not steer them), an author for
 * commits, and neither the user's nor the system's git config.
 */
export function gitEnv(author = 'Test'): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  const email = `${author.toLowerCase()}@example.com`;
  return {
    ...env,
    GIT_AUTHOR_NAME: author,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: author,
    GIT_COMMITTER_EMAIL: email,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
}
