import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';

// jsdom lacks the layout APIs Mantine reads; these stand-ins answer "no match, no size".
if (!window.matchMedia) {
  window.matchMedia = (query: string) =>
    ({
      matches: false,
      media: query,
      onchange: null,
      addListener: () => undefined,
      removeListener: () => undefined,
      addEventListener: () => undefined,
      removeEventListener: () => undefined,
      dispatchEvent: () => false,
    }) as MediaQueryList;
}
class NoResizeObserver {
  observe(): void {}
  unobserve(): void {}
  disconnect(): void {}
}
globalThis.ResizeObserver ??= NoResizeObserver as unknown as typeof ResizeObserver;
// jsdom has no scrollIntoView; Mantine's combobox calls it.
(window.HTMLElement.prototype as { scrollIntoView?: unknown }).scrollIntoView ??= () => undefined;

// findBy*/waitFor give up after 1 s by default; a busy 2-core CI machine (load average 10+)
// renders a Mantine form in several. The wait still ends as soon as the element shows.
configure({ asyncUtilTimeout: 20_000 });

afterEach(() => cleanup());
