// Runs cache trace scripts against Java Kafka Streams' own ThreadCache (kafka-streams 4.4.0) and
// writes what happens: every operation's result, every flush-listener call, and the cache's
// size in bytes, entry count and eviction count after each operation. cache_test.go runs the
// same scripts against internal/cache and compares with the *.out files this writes.
//
// Usage (see README.md): java -cp "$CP" CacheTrace.java a.trace b.trace ...  (writes a.transcript, b.transcript)
//
// Script lines (tokens separated by spaces, '#' starts a comment line; "null" is a null value,
// "-" a null bound or topic):
//   max N                         new ThreadCache of N bytes
//   listener NS                   flush listener on NS that prints the entries it receives
//   forward NS TO                 flush listener on NS that prints the entries and puts each
//                                 (dirty, same context) into namespace TO
//   put NS KEY VALUE TS OFFSET PARTITION TOPIC [HKEY=HVALUE ...]   a dirty entry (a write)
//   clean NS KEY VALUE            a clean entry (a value read from the store below)
//   putifabsent NS KEY VALUE TS OFFSET PARTITION TOPIC
//   get NS KEY | delete NS KEY | flush NS | clear NS | close NS | resize N
//   range NS FROM TO | rrange NS FROM TO | rangex NS FROM TO (upper bound exclusive) | all NS | rall NS
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.internals.ThreadCache;

import java.io.PrintWriter;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

public class CacheTrace {
    static ThreadCache cache;
    static PrintWriter out;
    static Constructor<?> entryCtor, cleanCtor;
    static Method mPut, mPutIfAbsent, mValue, mContext, mDirty, mSize, mDKey, mDNew, mDEntry, mSizeBytes;

    public static void main(String[] args) throws Exception {
        Class<?> entryClass = Class.forName("org.apache.kafka.streams.state.internals.LRUCacheEntry");
        entryCtor = entryClass.getDeclaredConstructor(byte[].class, Headers.class, boolean.class, long.class, long.class,
            int.class, String.class, byte[].class, byte[].class);
        cleanCtor = entryClass.getDeclaredConstructor(byte[].class);
        mValue = entryClass.getDeclaredMethod("value");
        mContext = entryClass.getDeclaredMethod("context");
        mDirty = entryClass.getDeclaredMethod("isDirty");
        mSize = entryClass.getDeclaredMethod("size");
        Class<?> dirtyClass = Class.forName("org.apache.kafka.streams.state.internals.ThreadCache$DirtyEntry");
        mDKey = dirtyClass.getDeclaredMethod("key");
        mDNew = dirtyClass.getDeclaredMethod("newValue");
        mDEntry = dirtyClass.getDeclaredMethod("entry");
        mSizeBytes = ThreadCache.class.getDeclaredMethod("sizeBytes");
        mPut = ThreadCache.class.getMethod("put", String.class, Bytes.class, entryClass);
        mPutIfAbsent = ThreadCache.class.getMethod("putIfAbsent", String.class, Bytes.class, entryClass);
        for (Method m : new Method[]{mValue, mContext, mDirty, mSize, mDKey, mDNew, mDEntry, mSizeBytes}) {
            m.setAccessible(true);
        }
        entryCtor.setAccessible(true);
        cleanCtor.setAccessible(true);
        Method mClear = ThreadCache.class.getDeclaredMethod("clear", String.class);
        Method mClose = ThreadCache.class.getDeclaredMethod("close", String.class);
        mClear.setAccessible(true);
        mClose.setAccessible(true);

        for (String file : args) {
            Path in = Path.of(file);
            Path outPath = Path.of(file.replaceAll("\\.trace$", "") + ".transcript");
            try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(outPath, StandardCharsets.UTF_8))) {
                out = w;
                for (String line : Files.readAllLines(in, StandardCharsets.UTF_8)) {
                    line = line.trim();
                    if (line.isEmpty() || line.startsWith("#")) {
                        continue;
                    }
                    String[] t = line.split(" ");
                    out.println("> " + line);
                    switch (t[0]) {
                        case "max":
                            StreamsMetricsImpl metrics = new StreamsMetricsImpl(new Metrics(), "test-client", Time.SYSTEM);
                            cache = new ThreadCache(new LogContext("trace "), Long.parseLong(t[1]), metrics);
                            break;
                        case "listener":
                            cache.addDirtyEntryFlushListener(t[1], listener(t[1], null));
                            break;
                        case "forward":
                            cache.addDirtyEntryFlushListener(t[1], listener(t[1], t[2]));
                            break;
                        case "put":
                            mPut.invoke(cache, t[1], key(t[2]), dirty(t, 3));
                            break;
                        case "clean":
                            mPut.invoke(cache, t[1], key(t[2]), cleanCtor.newInstance((Object) bytes(t[3])));
                            break;
                        case "putifabsent":
                            out.println("= " + entry(mPutIfAbsent.invoke(cache, t[1], key(t[2]), dirty(t, 3))));
                            break;
                        case "get":
                            out.println("= " + entry(cache.get(t[1], key(t[2]))));
                            break;
                        case "delete":
                            out.println("= " + entry(cache.delete(t[1], key(t[2]))));
                            break;
                        case "flush":
                            cache.flush(t[1]);
                            break;
                        case "clear":
                            mClear.invoke(cache, t[1]);
                            break;
                        case "close":
                            mClose.invoke(cache, t[1]);
                            break;
                        case "resize":
                            cache.resize(Long.parseLong(t[1]));
                            break;
                        case "range":
                            iterate(cache.range(t[1], bound(t[2]), bound(t[3])));
                            break;
                        case "rangex":
                            iterate(cache.range(t[1], bound(t[2]), bound(t[3]), false));
                            break;
                        case "rrange":
                            iterate(cache.reverseRange(t[1], bound(t[2]), bound(t[3])));
                            break;
                        case "all":
                            iterate(cache.all(t[1]));
                            break;
                        case "rall":
                            iterate(cache.reverseAll(t[1]));
                            break;
                        default:
                            throw new IllegalArgumentException("unknown op " + t[0]);
                    }
                    out.println("  size=" + mSizeBytes.invoke(cache) + " entries=" + cache.size() + " evicts=" + cache.evicts()
                        + " puts=" + cache.puts() + " gets=" + cache.gets() + " flushes=" + cache.flushes());
                }
            }
        }
    }

    static Object dirty(String[] t, int i) throws Exception {
        Headers headers = new RecordHeaders();
        for (int j = i + 5; j < t.length; j++) {
            String[] kv = t[j].split("=", 2);
            headers.add(kv[0], bytes(kv[1]));
        }
        String topic = t[i + 4].equals("-") ? null : t[i + 4];
        return entryCtor.newInstance(bytes(t[i]), headers, true, Long.parseLong(t[i + 2]), Long.parseLong(t[i + 1]),
            Integer.parseInt(t[i + 3]), topic, null, null);
    }

    static ThreadCache.DirtyEntryFlushListener listener(String ns, String forwardTo) {
        return (ThreadCache.DirtyEntryFlushListener) Proxy.newProxyInstance(CacheTrace.class.getClassLoader(),
            new Class<?>[]{ThreadCache.DirtyEntryFlushListener.class}, (proxy, method, args) -> {
                if (!method.getName().equals("apply")) {
                    return method.invoke(proxy, args);
                }
                List<?> entries = (List<?>) args[0];
                out.println("  flush " + ns + " (" + entries.size() + ")");
                for (Object d : entries) {
                    Bytes k = (Bytes) mDKey.invoke(d);
                    byte[] nv = (byte[]) mDNew.invoke(d);
                    Object e = mDEntry.invoke(d);
                    out.println("    " + str(k.get()) + " -> " + str(nv) + " " + ctx(e));
                    if (forwardTo != null) {
                        ProcessorRecordContext c = (ProcessorRecordContext) mContext.invoke(e);
                        mPut.invoke(cache, forwardTo, k, entryCtor.newInstance(nv, c.headers(), true, c.offset(), c.timestamp(),
                            c.partition(), c.topic(), null, null));
                    }
                }
                return null;
            });
    }

    static void iterate(KeyValueIterator<Bytes, ?> it) throws Exception {
        StringBuilder sb = new StringBuilder("= [");
        boolean first = true;
        while (it.hasNext()) {
            KeyValue<Bytes, ?> kv = it.next();
            if (!first) {
                sb.append(", ");
            }
            first = false;
            sb.append(str(kv.key.get())).append("=").append(str((byte[]) mValue.invoke(kv.value)));
        }
        out.println(sb.append("]"));
    }

    static String entry(Object e) throws Exception {
        if (e == null) {
            return "none";
        }
        return str((byte[]) mValue.invoke(e)) + " " + ctx(e);
    }

    static String ctx(Object e) throws Exception {
        ProcessorRecordContext c = (ProcessorRecordContext) mContext.invoke(e);
        StringBuilder sb = new StringBuilder();
        sb.append("ts=").append(c.timestamp()).append(" off=").append(c.offset()).append(" part=").append(c.partition())
            .append(" topic=").append(c.topic() == null ? "-" : c.topic());
        c.headers().forEach(h -> sb.append(" ").append(h.key()).append("=").append(str(h.value())));
        sb.append(" dirty=").append(mDirty.invoke(e)).append(" size=").append(mSize.invoke(e));
        return sb.toString();
    }

    static Bytes key(String s) {
        return Bytes.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    static Bytes bound(String s) {
        return s.equals("-") ? null : key(s);
    }

    static byte[] bytes(String s) {
        return s.equals("null") ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    static String str(byte[] b) {
        return b == null ? "null" : new String(b, StandardCharsets.UTF_8);
    }
}
