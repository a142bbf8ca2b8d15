package org.apache.kafka.connect.mirror;

import org.apache.kafka.common.TopicPartition;

/**
 * Reaches MM2's package-private record encoders (recordKey, recordValue), so
 * that the bytes compared in tests are the ones MM2's own code writes. It
 * lives in MM2's package for that reason only; it adds no format logic.
 */
public final class MirrorFormats {
    private MirrorFormats() {}

    /** Returns {key, value}. */
    public static byte[][] heartbeat(String source, String target, long timestamp) {
        Heartbeat h = new Heartbeat(source, target, timestamp);
        return new byte[][] {h.recordKey(), h.recordValue()};
    }

    /** Returns {key, value}. */
    public static byte[][] checkpoint(String group, String topic, int partition, long upstream, long downstream, String metadata) {
        Checkpoint c = new Checkpoint(group, new TopicPartition(topic, partition), upstream, downstream, metadata);
        return new byte[][] {c.recordKey(), c.recordValue()};
    }

    /** Returns {key, value}. */
    public static byte[][] offsetSync(String topic, int partition, long upstream, long downstream) {
        OffsetSync s = new OffsetSync(new TopicPartition(topic, partition), upstream, downstream);
        return new byte[][] {s.recordKey(), s.recordValue()};
    }
}
