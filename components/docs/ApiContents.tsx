import type { ApiReferenceView } from "@/lib/pages/api-reference";

/**
 * The page's table of contents: the rules, each group's operations, the
 * schemas. `titled`: whether it shows its own title (folded at the top of
 * a phone's page, the fold's summary is its title).
 */
export function ApiContents({ view, titled = true }: { view: ApiReferenceView; titled?: boolean }) {
  return (
    <nav aria-label="On this page" className="text-sm">
      {titled && <p className="font-semibold text-espresso">On this page</p>}
      <ul className="mt-2 space-y-3">
        <li>
          <a href="#checkout-rules" className="font-medium text-espresso hover:underline">
            Checkout rules
          </a>
        </li>
        <li>
          <a href="#conventions" className="font-medium text-espresso hover:underline">
            What every answer shares
          </a>
        </li>
        {view.groups.map((group) => (
          <li key={group.tag}>
            <a href={`#group-${group.tag}`} className="font-medium text-espresso hover:underline">
              {group.tag}
            </a>
            <ul className="mt-1 space-y-1 border-l border-sand pl-3">
              {group.operations.map((operation) => (
                <li key={operation.id}>
                  <a
                    href={`#${operation.id}`}
                    className="text-mocha hover:text-espresso hover:underline"
                  >
                    <span className="font-mono text-xs">{operation.method}</span>{" "}
                    <span className="break-all">{operation.path}</span>
                  </a>
                </li>
              ))}
            </ul>
          </li>
        ))}
        <li>
          <a href="#schemas" className="font-medium text-espresso hover:underline">
            Schemas
          </a>
        </li>
      </ul>
    </nav>
  );
}
