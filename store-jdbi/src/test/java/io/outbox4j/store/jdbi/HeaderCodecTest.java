package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class HeaderCodecTest {
    @Test
    void noHeaders_isTheEmptyText() {
        assertThat(HeaderCodec.encode(Map.of())).isEmpty();
        assertThat(HeaderCodec.decode("")).isEmpty();
    }

    @Test
    void separatorsEscapesNulAndLoneSurrogates_roundTripInOrder() {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("z-last-name-first", "1");
        headers.put("a=b", "c=d");
        headers.put("100%", "%41 is not an escape");
        headers.put("multi", "line\none\r\nline\ttwo");
        headers.put("nul", "\u0000");
        headers.put("lone", "\ud800 and \udfff");
        headers.put("pair", "\ud83d\ude80");
        headers.put("empty", "");
        String text = HeaderCodec.encode(headers);
        assertThat(text)
                .doesNotContain("\u0000")
                .contains("\ud83d\ude80")
                .startsWith("z-last-name-first=1\n");
        assertThat(HeaderCodec.firstUnstorable(text)).isEqualTo(-1);
        Map<String, String> back = HeaderCodec.decode(text);
        assertThat(back).containsExactlyEntriesOf(headers);
    }

    @Test
    void randomTexts_roundTrip() {
        Random random = new Random(42);
        for (int round = 0; round < 500; round++) {
            Map<String, String> headers = new LinkedHashMap<>();
            for (int i = 0; i < 5; i++) {
                headers.put(
                        randomText(random, 1 + random.nextInt(8)),
                        randomText(random, random.nextInt(12)));
            }
            assertThat(HeaderCodec.decode(HeaderCodec.encode(headers)))
                    .containsExactlyEntriesOf(headers);
        }
    }

    private static String randomText(Random random, int length) {
        char[] pool = {'a', '=', '%', '\n', '\r', '\u0000', '\ud800', '\udc00', '\u00e9', '0', 'F'};
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < length; i++) {
            sb.append(pool[random.nextInt(pool.length)]);
        }
        return sb.toString();
    }

    @Test
    void storableText_replacesOnlyNulAndLoneSurrogates() {
        assertThat(HeaderCodec.storableText("ok \ud83d\ude80")).isEqualTo("ok \ud83d\ude80");
        assertThat(HeaderCodec.storableText("a\u0000b\ud800c")).isEqualTo("a\uFFFDb\uFFFDc");
    }
}
