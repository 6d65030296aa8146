package mysqlproto

import "hash/crc32"

// The two checksums of the OceanBase 2.0 protocol. Both are reflected CRCs
// with an initial value of 0 and no final XOR, so they chain:
// CRC(CRC(0, a), b) == CRC(0, a||b), and CRC(0, "") == 0.

// crc16Table is the byte-wise table of CRC-16/ARC (reflected poly 0xA001).
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xA001
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()

// CRC16 continues the CRC-16/ARC checksum crc over p. It is the OB20 header
// checksum (OceanBase's ob_crc16): poly 0x8005 reflected, init 0, no final
// XOR. CRC16(0, "123456789") is 0xBB3D.
func CRC16(crc uint16, p []byte) uint16 {
	for _, b := range p {
		crc = crc>>8 ^ crc16Table[byte(crc)^b]
	}
	return crc
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C continues the raw CRC-32C (Castagnoli) register crc over p: init 0
// and no final XOR, unlike the standard CRC-32C, which inverts on the way in
// and out. It is the OB20 payload checksum (OceanBase's ob_crc64, which
// despite its name returns this 32-bit value). CRC32C(0, "123456789") is
// 0x58E3FA20. Go's table (hardware-accelerated where available) is used by
// undoing its inversions.
func CRC32C(crc uint32, p []byte) uint32 {
	return ^crc32.Update(^crc, castagnoli, p)
}
