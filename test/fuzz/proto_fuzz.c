/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto_fuzz.c - libFuzzer target for krexd's wire decoder: the header
 * parser and every message type's payload decoder, as krexd's conn.c runs
 * them on what a client sends.  Built with --enable-fuzz (clang); see
 * doc/security.md for the short CI run and the long run.
 */
/* The decoder itself, compiled here so that libFuzzer's coverage sees it
 * (the rest of libkrexcommon comes from the library, uninstrumented). */
#include "proto.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static union proto_body m;
	struct proto_hdr h;
	struct pbuf b;
	uint16_t type;

	if (size < PROTO_HDR_LEN)
		return 0;
	/* 1. the header as krexd reads it */
	if (proto_hdr_parse(data, &h) == PROTO_HDR_OK && h.length <= size - PROTO_HDR_LEN) {
		if (proto_unpack(h.type, data + PROTO_HDR_LEN, h.length, &m) == 0) {
			/* what decodes must encode again */
			pbuf_init(&b);
			(void)proto_pack(&b, h.type, h.seq, &m);
			pbuf_free(&b);
			proto_body_free(h.type, &m);
		}
	}
	/* 2. every type's decoder on the bytes after the header, whatever the header says */
	type = (uint16_t)(data[7] % 32);
	if (proto_unpack(type, data + PROTO_HDR_LEN, size - PROTO_HDR_LEN, &m) == 0)
		proto_body_free(type, &m);
	return 0;
}
