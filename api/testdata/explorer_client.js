// Drives the published Esplora client @bitcoinerlab/explorer (npm; its
// EsploraExplorer) against a utxod test server:
// node explorer_client.js URL HEIGHT (URL ends in /api). Prints one JSON
// object with what the client returned.
const { EsploraExplorer } = require('@bitcoinerlab/explorer');

(async () => {
  const [url, height] = process.argv.slice(2);
  const explorer = new EsploraExplorer({ url, irrevConfThresh: 3 });
  await explorer.connect();
  const out = {};
  out.connected = await explorer.isConnected();
  out.tipHeight = await explorer.fetchBlockHeight();
  // GET /block-height/:h, then GET /block/:hash (its timestamp).
  out.status = await explorer.fetchBlockStatus(Number(height));
  out.tipStatus = await explorer.fetchBlockStatus(out.tipHeight);
  out.beyond = (await explorer.fetchBlockStatus(out.tipHeight + 1)) === undefined;
  explorer.close();
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
