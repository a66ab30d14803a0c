/**
 * The extension's side of the agent socket (JSON lines), as the tether extension in pi speaks
 * it: a hello from a pane, then events. For tests that need agent states without a model; the
 * benchmarks use the same (testkit/agent-socket.ts).
 */
export { extensionAgent as fakeAgent, type ExtensionAgent as FakeAgent } from '../../testkit/agent-socket.js';
