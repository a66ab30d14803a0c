/**
 * The agent socket's framing: one JSON message a line, each line bounded (MAX_AGENT_LINE_BYTES)
 * before anything of it is kept. What the lines mean is extension-channel.ts's.
 */
import { StringDecoder } from 'node:string_decoder';
import { DomainError } from '../../errors.js';
import { MAX_AGENT_LINE_BYTES, type AgentMessage, type DaemonLine } from './extension-channel.js';

/** One message as a line. */
export function encodeLine(message: AgentMessage | DaemonLine): string {
  return `${JSON.stringify(message)}\n`;
}

/**
 * Splits a byte stream into lines, bounded: a line longer than the limit is an error and
 * nothing of it is kept. Bytes are kept as a list of chunks until a newline arrives.
 */
export class JsonLineReader {
  private parts: Buffer[] = [];
  private size = 0;
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly maxBytes = MAX_AGENT_LINE_BYTES) {}

  /** Feeds bytes; returns the complete lines in them. Throws `agent-line-too-long`. */
  push(data: Buffer): string[] {
    const lines: string[] = [];
    let at = 0;
    for (let nl = data.indexOf(0x0a, at); nl !== -1; nl = data.indexOf(0x0a, at)) {
      this.take(data.subarray(at, nl));
      const line = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
      this.parts = [];
      this.size = 0;
      const text = this.decoder.write(line) + this.decoder.end();
      if (text.trim() !== '') lines.push(text);
      at = nl + 1;
    }
    if (at < data.length) this.take(data.subarray(at));
    return lines;
  }

  private take(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.size + bytes.length > this.maxBytes) {
      this.parts = [];
      this.size = 0;
      throw new DomainError('agent-line-too-long', `a line is longer than ${this.maxBytes} bytes`);
    }
    this.parts.push(bytes);
    this.size += bytes.length;
  }
}
