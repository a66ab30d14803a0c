/**
 * The fake model for the real agent, under the tests' names: the chat-completions server of
 * testkit/fake-chat.ts, which the benchmarks use too. It listens on 127.0.0.1 and answers every
 * request with a streamed (SSE) reply the test scripts: text, tool calls, or an HTTP error. Every
 * request body is recorded, so a test can check what the agent sent (the naming call's prompt,
 * the model it asked for), and a reply can be held until the test releases it, so a state can be
 * observed without sleeping.
 */
export { lastOfRole, messageText, startFakeChat as startFakeModel } from '../../testkit/fake-chat.js';
export type { ChatRequest, ChatReply as FakeReply, ChatScript as FakeScript, FakeChat as FakeModel } from '../../testkit/fake-chat.js';
