/* SPDX-License-Identifier: MIT */
/*
 * The names of one build of the rseq assembly (src/arch/<arch>/rseq.S): the
 * library's, the test build (HWT_RSEQ_TEST: counts its restarts) and the
 * mutants the restart storm must catch (tests/stress/rseq.c; what each
 * breaks: src/arch/x86_64/rseq.S).  FN is the insertion, PUB the publish,
 * ABORTS the restart counter (test builds only), MSI_ABORTS the restarts
 * after a CMD_SYNC's MSIADDR store and PUB_ABORTS those of the publish
 * (HWT_RSEQ_TEST only).
 */
#if defined(HWT_RSEQ_BROKEN_COMMIT)
#define FN hwt__rseq_insert_broken
#define PUB hwt__rseq_publish_broken
#define ABORTS hwt__rseq_broken_aborts
#elif defined(HWT_RSEQ_BROKEN_POST)
#define FN hwt__rseq_insert_broken_post
#define PUB hwt__rseq_publish_broken_post
#define ABORTS hwt__rseq_broken_post_aborts
#elif defined(HWT_RSEQ_BROKEN_NOCPU)
#define FN hwt__rseq_insert_broken_nocpu
#define PUB hwt__rseq_publish_broken_nocpu
#define ABORTS hwt__rseq_broken_nocpu_aborts
#elif defined(HWT_RSEQ_BROKEN_MSIADDR)
#define FN hwt__rseq_insert_broken_msiaddr
#define PUB hwt__rseq_publish_broken_msiaddr
#define ABORTS hwt__rseq_broken_msiaddr_aborts
#elif defined(HWT_RSEQ_BROKEN_PUBOUT)
#define FN hwt__rseq_insert_broken_pubout
#define PUB hwt__rseq_publish_broken_pubout
#define ABORTS hwt__rseq_broken_pubout_aborts
#elif defined(HWT_RSEQ_BROKEN_NTFENCE)
#define FN hwt__rseq_insert_broken_ntfence
#define PUB hwt__rseq_publish_broken_ntfence
#define ABORTS hwt__rseq_broken_ntfence_aborts
#elif defined(HWT_RSEQ_BROKEN_PUBCPU)
#define FN hwt__rseq_insert_broken_pubcpu
#define PUB hwt__rseq_publish_broken_pubcpu
#define ABORTS hwt__rseq_broken_pubcpu_aborts
#elif defined(HWT_RSEQ_TEST)
#define FN hwt__rseq_insert_test
#define PUB hwt__rseq_publish_test
#define ABORTS hwt__rseq_test_aborts
#define MSI_ABORTS hwt__rseq_test_msi_aborts
#define PUB_ABORTS hwt__rseq_test_pub_aborts
#else
#define FN hwt__rseq_insert
#define PUB hwt__rseq_publish
#endif
