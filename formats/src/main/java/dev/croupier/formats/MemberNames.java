package dev.croupier.formats;

/**
 * Splits member names into record key and extension, and refuses unsafe names.
 *
 * <p>The key is the member path up to the first dot of its <em>file name</em> (the directory
 * part may contain dots); the extension is the rest, dot included, as dSort does:
 * {@code a/b.c/x.seg.png} has key {@code a/b.c/x} and extension {@code .seg.png}. WebDataset
 * splits at the same place but drops the dot.
 *
 * <p>Thread-safety: stateless.
 */
public final class MemberNames {
    private MemberNames() {
    }

    /**
     * @param name a member name
     * @return the index where the extension starts (the first dot of the file name), or
     *     {@code name.length()} when the file name has no dot
     */
    public static int extensionStart(String name) {
        int base = name.lastIndexOf('/') + 1;
        int dot = name.indexOf('.', base);
        return dot < 0 ? name.length() : dot;
    }

    /** @return the record key of a member name (path up to the first dot of the file name) */
    public static String key(String name) {
        return name.substring(0, extensionStart(name));
    }

    /** @return the extension of a member name, dot included, or "" when there is none */
    public static String extension(String name) {
        return name.substring(extensionStart(name));
    }

    /**
     * Whether a name is a relative path that stays inside its directory: not empty, not
     * absolute (no leading {@code /} or {@code \}, no drive letter), no {@code ..} segment,
     * no NUL character. The same rule as Go's {@code filepath.IsLocal}, which dSort applies.
     *
     * @param name a member name or an output path fragment
     * @return true when the name is safe to join onto a directory
     */
    public static boolean isLocal(String name) {
        if (name.isEmpty() || name.indexOf('\0') >= 0) {
            return false;
        }
        char c0 = name.charAt(0);
        if (c0 == '/' || c0 == '\\') {
            return false;
        }
        if (name.length() >= 2 && name.charAt(1) == ':' && Character.isLetter(c0)) {
            return false;
        }
        int start = 0;
        int n = name.length();
        while (start <= n) {
            int end = start;
            while (end < n && name.charAt(end) != '/' && name.charAt(end) != '\\') {
                end++;
            }
            if (end - start == 2 && name.charAt(start) == '.' && name.charAt(start + 1) == '.') {
                return false;
            }
            start = end + 1;
        }
        return true;
    }
}
