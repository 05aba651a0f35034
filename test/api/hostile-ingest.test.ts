import { beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from '../support/client.ts';
import { HOSTILE_FILES } from '../support/hostile-files.ts';
import { ingestFile, upload, waitForJob } from '../support/ingest.ts';

/**
 * A few of the hostile files (devstack/harness/hostile-files.ts) uploaded and ingested by the real
 * workers, to see their jobs end as the parse step says they should: the rest are run through
 * the parse step alone, in test/unit/hostile-files.test.ts.
 */

const bytesOf = (name: string) => HOSTILE_FILES.find((file) => file.name === name)!.bytes();

describe('hostile files through the workers', () => {
  let user: TestUser;
  beforeAll(async () => {
    user = await signUp('hostile');
  });

  it('reads a Markdown heading line that the old regex took minutes over', async () => {
    const job = await ingestFile(user.token, 'heading.md', undefined, bytesOf('md-heading'));
    expect(job.status, job.error_message ?? '').toBe('succeeded');
  });

  it('fails a DOCX nested 200,000 levels deep, in plain words', async () => {
    const job = await ingestFile(user.token, 'deep.docx', undefined, bytesOf('docx-deep-nesting'));
    expect(job).toMatchObject({
      status: 'failed',
      error_message: 'The document is nested more than 256 levels deep and cannot be read',
    });
  });

  it('fails a PDF whose content is a flate bomb, without decoding it', async () => {
    const job = await ingestFile(user.token, 'bomb.pdf', undefined, bytesOf('pdf-flate-bomb'));
    expect(job).toMatchObject({
      status: 'failed',
      error_message: 'The PDF could not be read: its content expands past 16 MB when decompressed',
    });
  });

  it.each([
    ['pdf-filter-name-escape', '16 MB'],
    ['pdf-filter-indirect', '16 MB'],
    ['pdf-filter-comment', '16 MB'],
    ['pdf-rc4-empty-password', '16 MB'],
    ['pdf-contents-8x15mb', '48 MB'],
  ])('fails %s, whose bomb a scan of the bytes cannot see, by what pdf.js decodes', async (name, limit) => {
    const job = await ingestFile(user.token, `${name}.pdf`, undefined, bytesOf(name));
    expect(job).toMatchObject({
      status: 'failed',
      error_message: `The PDF could not be read: its content expands past ${limit} when decompressed`,
    });
  });

  it('reads a PDF that decodes 30 MB a page over several steps, until the document has decoded 1 GB', async () => {
    // About two pages a step (each step may decode 64 MB), the total kept on the job between steps.
    const created = await upload(user.token, 'heavy.pdf', bytesOf('pdf-40-pages-of-15mb'));
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const job = await waitForJob(user.token, created.body.job_id, 170_000);
    expect(job.status, job.error_message ?? '').toBe('partial');
    expect(job.error_message).toBe(
      'Partly ingested: The PDF expands past 1 GB when decompressed; the pages after that point were not read',
    );
  }, 180_000);

  it('reads the beginning of a DOCX paragraph of 1.2 million runs inside the isolate, and says so', async () => {
    const job = await ingestFile(user.token, 'runs.docx', undefined, bytesOf('docx-million-runs'));
    expect(job.status, job.error_message ?? '').toBe('partial');
    expect(job.error_message).toBe(
      'Partly ingested: A part of the document has more than 200,000 elements; only its beginning was read',
    );
  });

  it('reads the first 2,000 pages of a 20,000-page PDF and says so', async () => {
    // Twenty extract steps of 100 pages: longer than ingestFile waits.
    const created = await upload(user.token, 'long.pdf', bytesOf('pdf-20000-pages'));
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const job = await waitForJob(user.token, created.body.job_id, 170_000);
    expect(job.status, job.error_message ?? '').toBe('partial');
    expect(job.error_message).toBe("Partly ingested: Only the first 2000 of the PDF's 20000 pages were read");
  }, 180_000);
});
