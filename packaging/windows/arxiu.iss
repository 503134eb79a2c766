; Inno Setup script for Arxiu (run by packaging/build-windows.ps1, which passes the defines).
; Per-user install by default (no administrator needed), Start-menu entry, optional desktop icon.
#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif

[Setup]
AppId={{6C1E2E1C-5A8B-4F5E-9F1D-3A7C0A6B4D21}
AppName=Arxiu
AppVersion={#AppVersion}
AppPublisher=Arxiu project
DefaultDirName={autopf}\Arxiu
DefaultGroupName=Arxiu
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir={#OutDir}
OutputBaseFilename=arxiu-{#AppVersion}-windows-x64-setup
SetupIconFile={#Root}\resources\icons\arxiu.ico
UninstallDisplayIcon={app}\arxiuw.exe
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern

[Languages]
Name: "en"; MessagesFile: "compiler:Default.isl"
Name: "ca"; MessagesFile: "compiler:Languages\Catalan.isl"
Name: "es"; MessagesFile: "compiler:Languages\Spanish.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; Flags: unchecked

[Files]
Source: "{#BundleDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
; arxiuw.exe is the windowed twin of arxiu.exe (the console one, for the CLI): no console window.
Name: "{group}\Arxiu"; Filename: "{app}\arxiuw.exe"
Name: "{autodesktop}\Arxiu"; Filename: "{app}\arxiuw.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\arxiuw.exe"; Description: "{cm:LaunchProgram,Arxiu}"; Flags: nowait postinstall skipifsilent
