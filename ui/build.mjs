// Builds the page into OUTDIR: index.html, app.js (one minified ES module, no source map) and
// app.css. The same sources give the same bytes.
//
//   node ui/build.mjs python/pi_proto/web/ui
//
// app.js bundles src/main.ts with the package's own modules (../typescript/src, by relative path).
// Their bare imports (@bufbuild/protobuf, @connectrpc/connect, ...) resolve from ui/node_modules,
// so the page holds one copy of each; the Node modules they name are replaced by the browser
// stand-ins of src/node/, and the global Buffer by src/node/buffer.ts.

import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const UI = path.dirname(fileURLToPath(import.meta.url));
const PACKAGE = path.resolve(UI, "../typescript");

/** What the page gets in place of each Node module the package imports. */
const STAND_INS = {
  "node:crypto": "src/node/crypto.ts",
  "node:http": "src/node/http.ts",
  "node:https": "src/node/http.ts",
  "node:timers/promises": "src/node/timers-promises.ts",
  "@connectrpc/connect-node": "src/node/connect-node.ts",
};

/** Node's modules by their stand-ins, and the package's bare imports from ui/node_modules. */
const browserModules = {
  name: "browser-modules",
  setup(build) {
    build.onResolve({ filter: /^(node:|@connectrpc\/connect-node$)/ }, (args) => {
      const standIn = STAND_INS[args.path];
      if (standIn === undefined) return { errors: [{ text: `${args.path} has no browser stand-in in build.mjs` }] };
      return { path: path.join(UI, standIn) };
    });
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (!args.importer.startsWith(PACKAGE + path.sep)) return undefined;
      return build.resolve(args.path, { kind: args.kind, resolveDir: UI });
    });
  },
};

async function main(argv) {
  if (argv.length !== 1 || argv[0].startsWith("-")) {
    console.error("usage: node ui/build.mjs OUTDIR");
    return 2;
  }
  const outdir = path.resolve(argv[0]);
  const common = {
    absWorkingDir: UI,
    bundle: true,
    minify: true,
    write: false,
    legalComments: "none",
    logLevel: "warning",
  };
  const script = await esbuild.build({
    ...common,
    entryPoints: ["src/main.ts"],
    outfile: "app.js",
    format: "esm",
    platform: "browser",
    target: ["es2022", "chrome109", "firefox115"],
    inject: ["src/node/buffer.ts"],
    plugins: [browserModules],
    charset: "utf8",
  });
  const style = await esbuild.build({ ...common, entryPoints: ["src/app.css"], outfile: "app.css", charset: "utf8" });
  const page = await readFile(path.join(UI, "src/index.html"));
  await mkdir(outdir, { recursive: true });
  const files = [
    ["index.html", page],
    ["app.js", script.outputFiles[0].contents],
    ["app.css", style.outputFiles[0].contents],
  ];
  for (const [name, contents] of files) {
    await writeFile(path.join(outdir, name), contents);
    console.log(`${path.join(argv[0], name)} (${contents.length.toLocaleString("en")} bytes)`);
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
