// Package obpart holds the rules by which an OceanBase 4.x server (MySQL
// mode) places a row: how it decodes utf8mb4, weighs and compares strings
// in each collation a partition key may have, and hashes each value type
// for KEY partitioning. obgate's partition calculation (route) and the
// simulator's placement (tools/obsim) both use it, and both are checked
// against vectors computed by OceanBase's own code (package golden).
//
// Everything here is a pure function of its arguments, allocates nothing
// and may be called from any goroutine.
//
// Sources, for each rule (oceanbase/obproxy ships the server's charset
// code unchanged; oceanbase/oceanbase is the server):
//   - utf8mb4 decoding: ob_mb_wc_utf8mb4 (obproxy src/lib/charset/ob_ctype_utf8.c);
//   - utf8mb4_general_ci weights: ob_unicase_default (same file), generated
//     into general_ci_table.go by tools/gencollation;
//   - comparisons: ob_strnncollsp_utf8mb4, ob_strnncollsp_mb_bin,
//     ob_strnncollsp_binary (ob_ctype_utf8.c, ob_ctype_mb.c, ob_ctype_bin.c);
//   - string hashes: ObCharset::hash with the collation's hash_sort
//     (ob_hash_sort_utf8mb4, ob_hash_sort_mb_bin, ob_hash_sort_bin);
//   - the KEY hash of a value: the datum murmur_hash_ functions of the
//     server (oceanbase src/share/datum/ob_datum_funcs_impl.h), NULL
//     included, and wide::PartitionHash for DECIMAL.
package obpart
