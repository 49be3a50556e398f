package kafka

import "encoding/binary"

// Murmur2 is the 32-bit murmur2 hash Kafka's clients partition keys by (Java:
// org.apache.kafka.common.utils.Utils.murmur2: seed 0x9747b28c, little-endian 4-byte blocks).
func Murmur2(data []byte) int32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	n := len(data)
	h := seed ^ uint32(n)
	for len(data) >= 4 {
		k := binary.LittleEndian.Uint32(data)
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
		data = data[4:]
	}
	switch len(data) {
	case 3:
		h ^= uint32(data[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// KeyPartition is the partition Java's default partitioner gives a non-null key among n
// partitions: (murmur2(key) & 0x7fffffff) % n (Java's layout).
func KeyPartition(key []byte, n int32) int32 {
	return (Murmur2(key) & 0x7fffffff) % n
}
