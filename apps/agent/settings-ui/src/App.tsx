import { Alert, Button, Container, Stack, Text, TextInput, Title } from '@mantine/core';
import { useEffect, useState } from 'react';
import { api, saveToken, takeToken } from './api';
import { SettingsPage } from './SettingsPage';

/** The page: ask for the local token when the link had none, else the settings. */
export function App() {
  const [token, setToken] = useState<string | null>(() => takeToken());
  // Opening the printed link in a tab already showing the page only changes the fragment.
  useEffect(() => {
    const onHash = () => {
      const t = takeToken();
      if (t) setToken(t);
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  if (!token) return <TokenPrompt onToken={setToken} />;
  return <SettingsPage api={api(token)} onUnauthorized={() => setToken(null)} />;
}

function TokenPrompt({ onToken }: { onToken: (t: string) => void }) {
  const [value, setValue] = useState('');
  return (
    <Container size="xs" py="xl">
      <Stack>
        <Title order={2}>FreeLoader donor settings</Title>
        <Alert color="blue" title="Sign in with the local token">
          Open the link the agent printed at start, or paste the token from the file{' '}
          <Text span ff="monospace">
            settings-token
          </Text>{' '}
          in the agent&apos;s state directory.
        </Alert>
        <TextInput
          label="Local token"
          autoComplete="off"
          value={value}
          onChange={(e) => setValue(e.currentTarget.value)}
        />
        <Button
          disabled={!value.trim()}
          onClick={() => {
            saveToken(value);
            onToken(value.trim());
          }}
        >
          Open settings
        </Button>
      </Stack>
    </Container>
  );
}
