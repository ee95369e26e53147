// Every AG-UI event in the given golden files (one JSON event per line;
// "#" lines are comments) against @ag-ui/core 1.0's own schemas, the ones
// its client parses every event with.
//
//   node agui-schema.mjs protocols/agui/testdata/*.golden
import fs from "node:fs";
import { EventSchemas } from "@ag-ui/core/schemas";
import { check, main } from "./check.mjs";

main(async () => {
  const files = process.argv.slice(2);
  check(files.length > 0, "golden files are given");
  let n = 0;
  const types = new Set();
  for (const file of files) {
    const lines = fs.readFileSync(file, "utf8").split("\n");
    lines.forEach((line, i) => {
      if (line.trim() === "" || line.startsWith("#")) return;
      const ev = JSON.parse(line);
      const r = EventSchemas.safeParse(ev);
      if (!r.success) {
        check(false, `${file}:${i + 1}: ${ev.type} is not a valid AG-UI event: ${JSON.stringify(r.error.issues)}`);
      }
      types.add(ev.type);
      n++;
    });
  }
  check(n > 0, `${n} events of ${types.size} types (${[...types].sort().join(", ")}) are valid AG-UI 1.0 events`);
});
