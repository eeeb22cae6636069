// A real local SMTP server (smtp-server, as SmtpCapture) that keeps every mail it takes and can be told to fail
// one chosen mail, once: refuse it with a temporary failure (451 after the message: nothing was taken), or take
// the whole message and drop the connection before answering (the sender cannot know it was taken).
import type { AddressInfo, Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface FaultyMail {
  to: string[];
  /** Raw message with quoted-printable soft breaks and escapes decoded. */
  text: string;
}

type Fault = 'refuse' | 'hang-up';

export class FaultySmtp {
  readonly mails: FaultyMail[] = [];
  /** Mails received but never answered (hang-ups): the sender does not know they arrived. */
  readonly unanswered: FaultyMail[] = [];
  private readonly faults: { fault: Fault; picks: (mail: FaultyMail) => boolean }[] = [];
  private server?: SMTPServer;
  /** Client sockets by remote port, to hang up on a session (smtp-server does not hand out its socket). */
  private readonly sockets = new Map<number, Socket>();

  /** The next mail that `picks` fails as `fault`; the ones after it go through. */
  failNext(fault: Fault, picks: (mail: FaultyMail) => boolean): void {
    this.faults.push({ fault, picks });
  }

  /** Returns the SMTP_URL to give the approval service. */
  async start(): Promise<string> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, session, callback) => {
        let raw = '';
        stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
        stream.on('end', () => {
          const mail = { to: session.envelope.rcptTo.map((r) => r.address), text: decode(raw) };
          const index = this.faults.findIndex((f) => f.picks(mail));
          if (index < 0) {
            this.mails.push(mail);
            return callback();
          }
          const [{ fault }] = this.faults.splice(index, 1);
          if (fault === 'refuse')
            return callback(Object.assign(new Error('try again later'), { responseCode: 451 }));
          this.unanswered.push(mail);
          this.sockets.get(session.remotePort)?.destroy();
        });
      },
    });
    this.server.server.on('connection', (socket: Socket) => {
      const port = socket.remotePort!;
      this.sockets.set(port, socket);
      socket.on('close', () => this.sockets.delete(port));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `smtp://127.0.0.1:${(this.server!.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Mails to `address` whose text contains `needle` that it took, answered or not (refused ones are not kept). */
  to(address: string, needle = ''): FaultyMail[] {
    return [...this.mails, ...this.unanswered].filter(
      (m) => m.to.includes(address) && m.text.includes(needle),
    );
  }
}

function decode(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
