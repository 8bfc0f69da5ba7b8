import { MantineProvider, createTheme } from '@mantine/core';
import { QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { isUnauthenticated } from './api/client';
import { keys } from './api/queries';
import { RequireUser } from './auth/RequireUser';
import { LoginPage } from './auth/LoginPage';
import { CachePage } from './cache/CachePage';
import { DatasetPage } from './datasets/DatasetPage';
import { DatasetsPage } from './datasets/DatasetsPage';
import { DonorsPage } from './donors/DonorsPage';
import { ImportPage } from './import/ImportPage';
import { Shell } from './layout/Shell';
import { SecurityPage } from './security/SecurityPage';
import { TransfersPage } from './transfers/TransfersPage';

const theme = createTheme({ primaryColor: 'indigo', defaultRadius: 'md' });

/** One client for the app; a 401 anywhere means the session ended, so forget the user. */
function makeQueryClient(): QueryClient {
  const qc: QueryClient = new QueryClient({
    queryCache: new QueryCache({
      onError: (error) => {
        if (isUnauthenticated(error)) qc.setQueryData(keys.me, null);
      },
    }),
    defaultOptions: {
      queries: { retry: (n, e) => !isUnauthenticated(e) && n < 2, refetchOnWindowFocus: false },
    },
  });
  return qc;
}

const queryClient = makeQueryClient();

/** The console: sign-in, then datasets, import, transfers and (for admins) donors. */
export function App() {
  return (
    <MantineProvider theme={theme} defaultColorScheme="light">
      <QueryClientProvider client={queryClient}>
        <BrowserRouter>
          <Routes>
            <Route path="/login" element={<LoginPage />} />
            <Route
              element={
                <RequireUser>
                  <Shell />
                </RequireUser>
              }
            >
              <Route index element={<Navigate to="/datasets" replace />} />
              <Route path="/datasets" element={<DatasetsPage />} />
              <Route path="/datasets/:id" element={<DatasetPage />} />
              <Route path="/import" element={<ImportPage />} />
              <Route path="/transfers" element={<TransfersPage />} />
              <Route path="/donors" element={<DonorsPage />} />
              <Route path="/cache" element={<CachePage />} />
              <Route path="/security" element={<SecurityPage />} />
              <Route path="*" element={<Navigate to="/datasets" replace />} />
            </Route>
          </Routes>
        </BrowserRouter>
      </QueryClientProvider>
    </MantineProvider>
  );
}
