/*
 * verify.c: libsecp256k1's ECDSA and BIP340 verification cost in plain C,
 * without the Go runtime — the cross-check for the figures in
 * bench/results/validation.md ("Two vCPUs"). Prints, five times, the
 * thread-CPU µs per verification over 10,000 verifications of 2,000
 * distinct random keys/messages. Not built by `go build` (no Go files
 * here).
 *
 * Bundled copy (what utxod compiles by default):
 *   S=internal/secp256k1/libsecp256k1
 *   gcc -O2 -I$S/include -DENABLE_MODULE_EXTRAKEYS=1 -DENABLE_MODULE_SCHNORRSIG=1 \
 *     -DECMULT_WINDOW_SIZE=15 -DCOMB_BLOCKS=43 -DCOMB_TEETH=6 -DUSE_ASM_X86_64=1 \
 *     internal/secp256k1/cbench/verify.c $S/src/secp256k1.c $S/src/precomputed_ecmult.c \
 *     $S/src/precomputed_ecmult_gen.c -o /tmp/verify-bundled
 * System library (Debian's libsecp256k1-dev):
 *   gcc -O2 internal/secp256k1/cbench/verify.c -lsecp256k1 -o /tmp/verify-system
 * One process, then two at once (each process reports its own cost):
 *   /tmp/verify-bundled; /tmp/verify-bundled & /tmp/verify-bundled; wait
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

#define N 2000

static double cpu_now(void) {
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static secp256k1_pubkey pk[N];
static secp256k1_ecdsa_signature sg[N];
static unsigned char msg[N][32];
static secp256k1_xonly_pubkey xpk[N];
static unsigned char ssig[N][64];

int main(void) {
	secp256k1_context *ctx = secp256k1_context_create(SECP256K1_CONTEXT_SIGN | SECP256K1_CONTEXT_VERIFY);
	srand(1);
	for (int i = 0; i < N; i++) {
		unsigned char sk[32];
		secp256k1_keypair kp;
		for (int j = 0; j < 32; j++) {
			sk[j] = rand();
			msg[i][j] = rand();
		}
		if (!secp256k1_ec_pubkey_create(ctx, &pk[i], sk) || !secp256k1_keypair_create(ctx, &kp, sk) ||
		    !secp256k1_keypair_xonly_pub(ctx, &xpk[i], NULL, &kp)) {
			i--;
			continue;
		}
		if (!secp256k1_ecdsa_sign(ctx, &sg[i], msg[i], sk, NULL, NULL) ||
		    !secp256k1_schnorrsig_sign32(ctx, ssig[i], msg[i], &kp, NULL)) {
			fprintf(stderr, "signing failed\n");
			return 1;
		}
	}
	for (int r = 0; r < 5; r++) {
		int ok = 0, ok2 = 0;
		double t0 = cpu_now();
		for (int k = 0; k < 5; k++)
			for (int i = 0; i < N; i++) ok += secp256k1_ecdsa_verify(ctx, &sg[i], msg[i], &pk[i]);
		double t1 = cpu_now();
		for (int k = 0; k < 5; k++)
			for (int i = 0; i < N; i++) ok2 += secp256k1_schnorrsig_verify(ctx, ssig[i], msg[i], 32, &xpk[i]);
		double t2 = cpu_now();
		if (ok != 5 * N || ok2 != 5 * N) {
			fprintf(stderr, "a signature did not verify\n");
			return 1;
		}
		printf("ecdsa %.2f us  schnorr %.2f us\n", (t1 - t0) / (5 * N) * 1e6, (t2 - t1) / (5 * N) * 1e6);
	}
	secp256k1_context_destroy(ctx);
	return 0;
}
