// Command zone prints, as gojail would see them, the process's local zone,
// the current zone's name and whether TZ is set after utc.Restore.
package main

import (
	"fmt"
	"os"
	"time"

	_ "github.com/BurntSushi/toml" // reads the local zone as it initialises
	"github.com/gojail/gojail/cmd/gojail/internal/utc"
)

func main() {
	utc.Restore()
	_, tz := os.LookupEnv("TZ")
	name, _ := time.Now().Zone()
	fmt.Println(time.Local.String(), name, tz)
}
