import {
  GlobalWorkerOptions,
  getDocument,
  InvalidPDFException,
  PasswordException,
  type PDFDocumentProxy,
  PDFWorker,
  RenderingCancelledException,
  type RenderTask,
  ResponseException,
  TextLayer,
} from 'pdfjs-dist';
import workerUrl from 'pdfjs-dist/build/pdf.worker.min.mjs?url';
import { useEffect, useRef, useState } from 'preact/hooks';
import { findPassage } from './find-passage.ts';
import { highlightItems, scrollToMark } from './highlight.ts';
import './pdf.css';

// The worker is one of the app's own assets: the page's policy loads scripts from its origin only.
GlobalWorkerOptions.workerSrc = workerUrl;

let worker: PDFWorker | undefined;
/** One worker for every PDF opened: starting one (a 1.3 MB script) takes longer than opening a document in it. */
function sharedWorker(): PDFWorker {
  if (!worker || worker.destroyed) worker = new PDFWorker();
  return worker;
}

/** The document a link names: a signed link's token changes each time one is minted, the document does not. */
const documentOf = (url: string) => url.split('?')[0] as string;

interface Props {
  /** The document's signed Storage link. */
  url: string;
  /** The cited page, from 1. */
  page: number;
  /** The cited passage's text, as stored: highlighted where the page has it. */
  passage: string;
  /** The file's name, for messages. */
  name: string;
}

/** What went wrong, for a reader: pdf.js's own messages and stacks say nothing to them. */
function failureMessage(error: unknown, name: string): string {
  if (error instanceof PasswordException) return `${name} is protected by a password, so it cannot be shown here.`;
  if (error instanceof InvalidPDFException) return `${name} could not be shown: it is not a PDF that can be read.`;
  if (error instanceof ResponseException) {
    return error.status === 404
      ? `${name} is no longer in storage.`
      : `${name} could not be downloaded (HTTP ${error.status}): its link may have expired. Close this source and open it again.`;
  }
  return `${name} could not be downloaded or shown. Check the connection, then open the source again.`;
}

/** A chunk that runs on past its page goes on at the top of the next; further on, a match would be chance. */
const highlightsOn = (shown: number, cited: number) => shown === cited || shown === cited + 1;

/**
 * A PDF opened at a cited page, fitted to the panel's width, with the cited passage highlighted in pdf.js's
 * text layer (which also makes the page's text selectable) and scrolled to. Loaded on demand by the
 * source panel: pdf.js is half a megabyte, and its worker more.
 */
export default function PdfView({ url, page, passage, name }: Props) {
  const stored = documentOf(url);
  const latestUrl = useRef(url);
  latestUrl.current = url;
  const [pdf, setPdf] = useState<PDFDocumentProxy | null>(null);
  const [shown, setShown] = useState(page);
  const [width, setWidth] = useState(0);
  const [renderedPage, setRenderedPage] = useState(0);
  const [failure, setFailure] = useState<string | null>(null);
  const frame = useRef<HTMLDivElement>(null);
  const sheet = useRef<HTMLDivElement>(null);

  useEffect(() => {
    setPdf(null);
    setFailure(null);
    const task = getDocument({
      // pdf.js 6 no longer compiles fonts into functions (it dropped `isEvalSupported`), so the page's policy
      // needs no 'unsafe-eval'.
      url: latestUrl.current,
      worker: sharedWorker(),
      // Its data files, beside the app (web/build.ts): fonts a PDF names without embedding, CJK character maps,
      // colour profiles, and the JBIG2 and JPEG 2000 decoders in JavaScript, since WebAssembly would need
      // 'wasm-unsafe-eval' in the page's policy.
      standardFontDataUrl: '/pdfjs/standard_fonts/',
      cMapUrl: '/pdfjs/cmaps/',
      iccUrl: '/pdfjs/iccs/',
      wasmUrl: '/pdfjs/wasm/',
      useWasm: false,
      // pdf.js's defaults: the file streams in while the byte ranges the page needs are fetched ahead of it.
      // Ranges alone (disableStream, disableAutoFetch) were slower: reaching page 150 of a flat page tree took
      // ~100 requests one after another (docs/benchmarks.md).
    });
    task.promise.then(setPdf, (error: unknown) => setFailure(failureMessage(error, name)));
    return () => void task.destroy();
  }, [stored, name]);

  useEffect(() => setShown(page), [page]);

  useEffect(() => {
    const element = frame.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => setWidth(Math.floor(entry?.contentRect.width ?? 0)));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  useEffect(() => {
    if (!pdf || width === 0) return;
    let cancelled = false;
    let render: RenderTask | undefined;
    let text: TextLayer | undefined;
    setRenderedPage(0);
    setFailure(null);
    (async () => {
      const pdfPage = await pdf.getPage(shown);
      if (cancelled) return;
      const viewport = pdfPage.getViewport({ scale: width / pdfPage.getViewport({ scale: 1 }).width });
      const ratio = window.devicePixelRatio || 1;
      const canvas = document.createElement('canvas');
      canvas.width = Math.floor(viewport.width * ratio);
      canvas.height = Math.floor(viewport.height * ratio);
      canvas.setAttribute('aria-hidden', 'true');
      const layer = document.createElement('div');
      layer.className = 'textLayer';
      render = pdfPage.render({ canvas, viewport, transform: ratio === 1 ? undefined : [ratio, 0, 0, ratio, 0, 0] });
      text = new TextLayer({ textContentSource: pdfPage.streamTextContent(), container: layer, viewport });
      await Promise.all([render.promise, text.render()]);
      const target = sheet.current;
      if (cancelled || !target) return;
      // Swapped in whole, so that a page drawn again at a new width never shows blank meanwhile.
      target.style.setProperty('--scale-factor', String(viewport.scale));
      target.style.setProperty('aspect-ratio', `${viewport.width} / ${viewport.height}`);
      target.replaceChildren(canvas, layer);
      const match = highlightsOn(shown, page) ? findPassage(text.textContentItemsStr, passage) : null;
      const marked = match ? highlightItems(text.textDivs, match.ranges) : [];
      if (marked[0]) scrollToMark(marked[0]);
      setRenderedPage(shown);
    })().catch((error: unknown) => {
      if (!cancelled && !(error instanceof RenderingCancelledException))
        setFailure(`Page ${shown} of ${name} could not be shown.`);
    });
    return () => {
      cancelled = true;
      render?.cancel();
      text?.cancel();
    };
  }, [pdf, shown, width, page, passage, name]);

  const state = failure ? 'failed' : pdf && renderedPage === shown ? 'ready' : 'loading';
  const pages = pdf?.numPages ?? 0;
  return (
    <div class="pdf-view" data-state={state} aria-busy={state === 'loading' ? 'true' : undefined}>
      <div class="pdf-nav">
        <button type="button" class="secondary" disabled={!pdf || shown <= 1} onClick={() => setShown(shown - 1)}>
          Previous page
        </button>
        <span aria-live="polite">{pdf ? `Page ${shown} of ${pages}` : `Page ${shown}`}</span>
        <button type="button" class="secondary" disabled={!pdf || shown >= pages} onClick={() => setShown(shown + 1)}>
          Next page
        </button>
        <a href={url} target="_blank" rel="noopener noreferrer">
          Open the PDF
        </a>
      </div>
      {failure ? (
        <p class="pdf-failure" role="alert">
          {failure}
        </p>
      ) : (
        state === 'loading' && (
          <p class="pdf-loading">
            Opening page {shown} of {name}…
          </p>
        )
      )}
      <div ref={frame} class="pdf-frame">
        <div ref={sheet} class="pdf-page" />
      </div>
    </div>
  );
}
