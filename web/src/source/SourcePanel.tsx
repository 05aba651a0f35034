import { useQuery } from '@tanstack/preact-query';
import type { ComponentType } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { documentsIn } from '../documents/api.ts';
import { Failure } from '../Failure.tsx';
import { PassageView } from './PassageView.tsx';
import { placeOf, type Source, scoresOf } from './place.ts';

type PdfProps = { url: string; page: number; passage: string; name: string };

/** The cited passage and its neighbours, under the same access rules as search (the personal space's own route). */
function usePassages(source: Source, fallbackCollection: string | null) {
  const collection = source.collection_id ?? fallbackCollection;
  const documentId = source.document_id;
  return useQuery({
    queryKey: ['passages', collection, documentId, source.chunk_index],
    enabled: documentId !== null,
    // Its signed link lasts an hour: reopening a source within the half hour needs no new one.
    staleTime: 30 * 60_000,
    queryFn: () => documentsIn(collection).passages(documentId as string, source.chunk_index, 2),
  });
}

/**
 * pdf.js is large: it loads the first time a PDF source is opened, never with the app. A source with a page number
 * may be a PDF: its import starts with the click, beside the request that says what the document is.
 */
function usePdfView(likely: boolean): ComponentType<PdfProps> | null {
  const [view, setView] = useState<ComponentType<PdfProps> | null>(null);
  useEffect(() => {
    if (likely && !view) void import('./PdfView.tsx').then((module) => setView(() => module.default));
  }, [likely, view]);
  return view;
}

function Viewer({ source, fallbackCollection }: { source: Source; fallbackCollection: string | null }) {
  const window = usePassages(source, fallbackCollection);
  const document = window.data?.document;
  const pdf = document?.type === 'pdf' && typeof source.page === 'number' && document.open_url !== null && !source.image_url;
  const PdfView = usePdfView(typeof source.page === 'number' && !source.image_url);

  if (source.image_url) {
    return (
      <figure class="stack">
        <img src={source.image_url} alt={`The figure or page this passage describes, from ${source.source}`} />
        <figcaption>{source.text}</figcaption>
      </figure>
    );
  }
  // Answers recorded before sources named their document: the passage as it was cited is all there is.
  if (source.document_id === null) return <blockquote>{source.text}</blockquote>;
  if (window.isPending) return <p>Opening {source.source}…</p>;
  if (window.error) return <Failure error={window.error} />;
  if (pdf && document?.open_url) {
    return PdfView ? (
      <PdfView url={document.open_url} page={source.page as number} passage={source.text} name={source.source} />
    ) : (
      <p>Opening {source.source}…</p>
    );
  }
  return window.data ? <PassageView window={window.data} /> : null;
}

interface Props {
  sources: Source[];
  /** Which source is open, from 1. */
  active: number;
  onChoose: (n: number) => void;
  onClose: () => void;
  /** The collection a source without its own (the personal space, older answers) is looked up in. */
  fallbackCollection: string | null;
}

/** The answer's sources, and the one chosen opened at its passage: a PDF at its page, other files in their text. */
export function SourcePanel({ sources, active, onChoose, onClose, fallbackCollection }: Props) {
  const heading = useRef<HTMLHeadingElement>(null);
  const source = sources[active - 1];
  useEffect(() => heading.current?.focus(), [active]);
  return (
    <aside class="source-panel stack" aria-labelledby="source-title">
      <div class="row tight">
        <h2 id="source-title" ref={heading} tabIndex={-1} class="grow">
          Source {active}
          {source ? `: ${source.source}` : ''}
        </h2>
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      {!source && <p>This answer cites a source it was not given.</p>}
      {source && <p class="hint">{[placeOf(source), scoresOf(source)].filter(Boolean).join(' · ')}</p>}
      {source && <Viewer key={`${active}`} source={source} fallbackCollection={fallbackCollection} />}
      <details open={sources.length <= 5}>
        <summary>All sources of this answer ({sources.length})</summary>
        <ol class="plain source-list">
          {sources.map((s, i) => (
            <li key={`${s.document_id}-${s.chunk_index}`}>
              <button
                type="button"
                class="link"
                aria-current={i + 1 === active ? 'true' : undefined}
                onClick={() => onChoose(i + 1)}
              >
                [{i + 1}] {s.source}
              </button>
              <span class="hint"> {[placeOf(s), scoresOf(s)].filter(Boolean).join(' · ')}</span>
            </li>
          ))}
        </ol>
      </details>
    </aside>
  );
}
