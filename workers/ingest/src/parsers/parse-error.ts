export type ParseFailure = 'encrypted' | 'corrupt' | 'empty' | 'unsafe' | 'too_large' | 'unsupported' | 'quota';

/** A document that cannot be ingested. The message is shown to the user as the job's error_message. */
export class ParseError extends Error {
  constructor(
    readonly reason: ParseFailure,
    message: string,
  ) {
    super(message);
    this.name = 'ParseError';
  }
}
