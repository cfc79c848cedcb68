// Drives the published Esplora client @mempool/mempool.js (npm) against a
// utxod test server: node mempooljs_client.js HOST:PORT HOST2:PORT ADDRESS HASH
// (the second server has a UTXO limit below the address's outputs).
// Prints one JSON object with what the client returned.
const mempoolJS = require('@mempool/mempool.js');

(async () => {
  const [host, limitedHost, address, hash] = process.argv.slice(2);
  const { bitcoin: { addresses, blocks } } = mempoolJS({ hostname: host, network: 'regtest', protocol: 'http' });
  const out = {};
  out.tipHeight = await blocks.getBlocksTipHeight();
  out.tipHash = await blocks.getBlocksTipHash();
  out.height1 = await blocks.getBlockHeight({ height: 1 });
  out.status = await blocks.getBlockStatus({ hash });
  out.txids = await blocks.getBlockTxids({ hash });
  out.txid0 = await blocks.getBlockTxid({ hash, index: 0 });
  out.header = await blocks.getBlockHeader({ hash });
  out.rawLength = (await blocks.getBlockRaw({ hash })).length;
  out.utxos = await addresses.getAddressTxsUtxo({ address });
  const limited = mempoolJS({ hostname: limitedHost, network: 'regtest', protocol: 'http' }).bitcoin;
  try {
    await limited.addresses.getAddressTxsUtxo({ address });
    out.limited = 'no error';
  } catch (e) {
    // What wallets test (e.g. xverse-core's esploraAPiProvider).
    out.limited = { status: e.response.status, tooMany: String(e.response.data).includes('Too many unspent transaction outputs') };
  }
  try {
    await addresses.getAddressTxsUtxo({ address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4' });
    out.foreign = 'no error';
  } catch (e) {
    out.foreign = { status: e.response.status, data: String(e.response.data) };
  }
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
