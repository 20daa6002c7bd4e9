// SPDX-License-Identifier: MIT
// make apps' Node.js case (tools/apps.sh): files opened, written, synced,
// stat'ed and read back through fs.promises (libuv's io_uring with
// UV_USE_IO_URING=1). Prints the number of files and a digest of it all.
'use strict';
const fsp = require('fs').promises;
const crypto = require('crypto');
const path = require('path');

async function main(dir, n) {
	const h = crypto.createHash('sha256');
	await fsp.mkdir(dir, { recursive: true });
	for (let i = 0; i < n; i++) {
		const p = path.join(dir, 'f' + i);
		const data = Buffer.alloc(4096 + i * 61, i % 251);
		let fh = await fsp.open(p, 'w');
		await fh.write(data, 0, data.length, 0);
		await fh.write(Buffer.from('tail' + i), 0, 4 + String(i).length, data.length);
		await fh.sync();
		await fh.close();
		const st = await fsp.stat(p);
		fh = await fsp.open(p, 'r');
		const back = Buffer.alloc(st.size);
		const { bytesRead } = await fh.read(back, 0, st.size, 0);
		await fh.close();
		h.update(String(st.size) + ':' + bytesRead + ':');
		h.update(back);
		h.update(await fsp.readFile(p));
	}
	console.log(n + ' files ' + h.digest('hex'));
}
main(process.argv[2], Number(process.argv[3])).catch((e) => {
	console.error(e);
	process.exit(1);
});
