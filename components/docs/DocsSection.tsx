/** A part of the reference: anchored, titled, a line on what it holds, then its entries. */
export function DocsSection({
  id,
  title,
  intro,
  children,
}: {
  id: string;
  title: string;
  intro: React.ReactNode;
  children: React.ReactNode;
}) {
  return (
    <section id={id} aria-labelledby={`${id}-title`} className="mt-12 scroll-mt-6">
      <h2 id={`${id}-title`} className="font-display text-2xl font-semibold text-espresso">
        {title}
      </h2>
      <p className="mt-1 max-w-3xl leading-relaxed text-mocha">{intro}</p>
      <div className="mt-4">{children}</div>
    </section>
  );
}
