/* core/fs.h - folders. */
#ifndef OB_CORE_FS_H
#define OB_CORE_FS_H

#include "core/ob.h"

/* mkdir -p path (mode 0777 less the umask). Safe against another process
 * removing an empty parent meanwhile (the path is made again). On failure
 * the status is OB_ERR_IO, the message names the part that could not be made
 * (and its parent, where the parent's permissions or a file in the way are
 * the cause), and errno holds the cause. */
ob_status ob_mkdir_p(const char *path, ob_err *e);

#endif
