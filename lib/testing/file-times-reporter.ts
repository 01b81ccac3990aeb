import type { Reporter, TestModule } from "vitest/node";
import { minutesAndSeconds } from "../build/phase-times";

const SHOWN = 12;

/**
 * Says at the end of a Vitest run which files took longest, and in which
 * lane (vitest.config.mts): the figures docs/testing.md keeps, and the
 * first place to look when a run grows slower.
 */
export default class FileTimesReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const files = testModules
      .map((testModule) => ({
        file: testModule.relativeModuleId,
        lane: testModule.project.name,
        seconds: testModule.diagnostic().duration / 1000,
      }))
      .sort((a, b) => b.seconds - a.seconds);
    const lines = files
      .slice(0, SHOWN)
      .map(
        ({ file, lane, seconds }) =>
          `  ${minutesAndSeconds(seconds).padStart(10)}  ${file}${lane ? ` (${lane})` : ""}`,
      );
    console.log(
      `\n[tests] the ${Math.min(SHOWN, files.length)} slowest files:\n${lines.join("\n")}`,
    );
  }
}
