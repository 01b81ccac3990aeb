/**
 * Moves focus to an outcome that has just appeared, and brings `shown`
 * (the outcome, or a box around it) into view.
 *
 * Tabbing to Pay can start a smooth scroll (the page scrolls smoothly) that
 * is still under way when a quick answer arrives; left alone it carries on
 * to where the button was and can leave the outcome off screen. Neither
 * focusing nor scrollIntoView stops it when the outcome is already in view,
 * but any scroll of the same box does: each box the outcome sits in is first
 * held where it is.
 */
export function focusOutcome(target: HTMLElement, shown: HTMLElement = target) {
  for (let box = target.parentElement; box; box = box.parentElement) {
    if (box.scrollHeight > box.clientHeight) box.scrollBy({ top: 0, behavior: "instant" });
  }
  target.focus({ preventScroll: true });
  shown.scrollIntoView({ block: "nearest" });
}
